import {
  checkMetadata,
  failedPrecondition,
  invalidArgument,
  mergeMetadata,
  type Metadata,
  newId,
  type TenantRef,
} from '@recur/kernel';
import { CUSTOMER_EMAIL_MAX, CUSTOMER_NAME_MAX, EMAIL_PATTERN } from '@recur/contracts';

/** A customer as the domain sees it; persistence and transport map to and from this. */
export interface Customer {
  id: string;
  tenant: TenantRef;
  name: string;
  email: string;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export interface CustomerFields {
  name?: string;
  email?: string;
  metadata?: Metadata;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalidArgument('name', 'name must not be empty');
  if (trimmed.length > CUSTOMER_NAME_MAX) throw invalidArgument('name', `name must be at most ${CUSTOMER_NAME_MAX} characters`);
  return trimmed;
}

function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (trimmed.length > CUSTOMER_EMAIL_MAX || !EMAIL_PATTERN.test(trimmed)) {
    throw invalidArgument('email', 'email must be a valid e-mail address');
  }
  return trimmed;
}

export function createCustomer(tenant: TenantRef, fields: Required<Pick<CustomerFields, 'name' | 'email'>> & CustomerFields, now: Date): Customer {
  return {
    id: newId('cus'),
    tenant,
    name: checkName(fields.name),
    email: checkEmail(fields.email),
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
}

function assertNotDeleted(customer: Customer): void {
  if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot change.`);
}

export function updateCustomer(customer: Customer, fields: CustomerFields, now: Date): Customer {
  assertNotDeleted(customer);
  return {
    ...customer,
    name: fields.name === undefined ? customer.name : checkName(fields.name),
    email: fields.email === undefined ? customer.email : checkEmail(fields.email),
    metadata: fields.metadata === undefined ? customer.metadata : checkMetadata(mergeMetadata(customer.metadata, fields.metadata)),
    updatedAt: now,
  };
}

export function deleteCustomer(customer: Customer, now: Date): Customer {
  assertNotDeleted(customer);
  return { ...customer, deletedAt: now, updatedAt: now };
}
