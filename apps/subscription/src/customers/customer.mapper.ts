import { create } from '@bufbuild/protobuf';
import { customerV1, presentCustomer, type CustomerJson } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import type { Customer as CustomerRow, Prisma } from '../generated/prisma/client';
import type { Customer } from './customer';

export function fromCustomerRow(row: CustomerRow): Customer {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    name: row.name,
    email: row.email,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedAt: row.deletedAt,
    testClockId: row.testClockId,
  };
}

export function toCustomerRow(customer: Customer): Prisma.CustomerCreateInput {
  return {
    id: customer.id,
    accountId: customer.tenant.accountId,
    livemode: customer.tenant.livemode,
    name: customer.name,
    email: customer.email,
    metadata: customer.metadata,
    createdAt: customer.createdAt,
    updatedAt: customer.updatedAt,
    deletedAt: customer.deletedAt,
    testClockId: customer.testClockId,
  };
}

export function toCustomerMessage(customer: Customer): customerV1.Customer {
  return create(customerV1.CustomerSchema, {
    id: customer.id,
    livemode: customer.tenant.livemode,
    name: customer.name,
    email: customer.email,
    metadata: customer.metadata,
    created: BigInt(unixSeconds(customer.createdAt)),
    updated: BigInt(unixSeconds(customer.updatedAt)),
    deletedAt: customer.deletedAt ? BigInt(unixSeconds(customer.deletedAt)) : undefined,
    testClockId: customer.testClockId ?? undefined,
  });
}

export const toCustomerJson = (customer: Customer): CustomerJson => presentCustomer(toCustomerMessage(customer));
