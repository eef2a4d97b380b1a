import { isLocale, LOCALES } from '@recur/i18n';
import {
  checkMetadata,
  failedPrecondition,
  invalidArgument,
  mergeMetadata,
  type Metadata,
  newId,
  type TenantRef,
} from '@recur/kernel';
import { checkTaxId, CUSTOMER_EMAIL_MAX, CUSTOMER_NAME_MAX, EMAIL_PATTERN, isCountryCode, TAX_EXEMPT_STATUSES, TAX_IDS_MAX, type TaxExemptStatus, type TaxIdType } from '@recur/vocabulary';

/** A postal address (docs/api/customers.md#address-and-tax-status); country is ISO 3166-1 alpha-2. */
export interface Address {
  line1: string | null;
  line2: string | null;
  city: string | null;
  region: string | null;
  postalCode: string | null;
  country: string | null;
}

const ADDRESS_FIELD_MAX = 200;
const ADDRESS_FIELDS = [['line1', 'line1'], ['line2', 'line2'], ['city', 'city'], ['region', 'region'], ['postalCode', 'postal_code']] as const;

/** Each part trimmed (empty → null), at most 200 characters; the country an upper-case ISO 3166-1 alpha-2 code. An all-empty address is none. */
export function checkAddress(address: Address | null | undefined): Address | null {
  if (address === null || address === undefined) return null;
  const checked = { ...address };
  for (const [field, param] of ADDRESS_FIELDS) {
    const value = address[field]?.trim() ?? '';
    if (value.length > ADDRESS_FIELD_MAX) throw invalidArgument(`address.${param}`, `address.${param} must be at most ${ADDRESS_FIELD_MAX} characters`);
    checked[field] = value === '' ? null : value;
  }
  const country = address.country?.trim() ?? '';
  if (country !== '' && !isCountryCode(country)) throw invalidArgument('address.country', 'address.country must be an ISO 3166-1 alpha-2 country code in upper case, such as ZM or SN');
  checked.country = country === '' ? null : country;
  return Object.values(checked).every((value) => value === null) ? null : checked;
}

/** A locale Recur has a catalogue for (docs/localization.md#which-language); empty or null: none (the account's default applies). */
export function checkPreferredLocale(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (!isLocale(value)) throw invalidArgument('preferred_locale', `preferred_locale must be one of ${LOCALES.join(', ')}`);
  return value;
}

/** E.164: a plus, a country code and at most 15 digits in all (`+221771234567`); spaces and dashes a person types are dropped. */
export function checkPhone(value: string | null | undefined): string | null {
  const phone = (value ?? '').replace(/[\s-]/g, '');
  if (phone === '') return null;
  if (!/^\+[1-9]\d{6,14}$/.test(phone)) throw invalidArgument('phone', 'phone must be an E.164 number: a plus, the country code and the number, such as +221771234567');
  return phone;
}

/** A customer's tax id: Stripe's type name and the value as stored (docs/api/customers.md#tax-ids). */
export interface TaxId {
  type: TaxIdType;
  value: string;
}

/** At most five tax ids, each checked by its type's rule (@recur/vocabulary checkTaxId); null or empty: none. */
export function checkTaxIds(taxIds: readonly { type: string; value: string }[] | null | undefined): TaxId[] {
  if (!taxIds) return [];
  if (taxIds.length > TAX_IDS_MAX) throw invalidArgument('tax_ids', `tax_ids must have at most ${TAX_IDS_MAX} entries`);
  return taxIds.map(({ type, value }, index) => {
    const check = checkTaxId(type, value);
    if (!check.ok) throw invalidArgument(`tax_ids[${index}].${check.part}`, `tax_ids[${index}].${check.part} ${check.message}`);
    return { type: check.type, value: check.value };
  });
}

export function checkTaxExempt(value: string | undefined): TaxExemptStatus {
  if (value === undefined || value === '') return 'none';
  if (!(TAX_EXEMPT_STATUSES as readonly string[]).includes(value)) throw invalidArgument('tax_exempt', `tax_exempt must be one of ${TAX_EXEMPT_STATUSES.join(', ')}`);
  return value as TaxExemptStatus;
}

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
  /** The sandbox test clock the customer lives on (set at creation only); null: real time. */
  testClockId: string | null;
  address: Address | null;
  taxExempt: TaxExemptStatus;
  /** The language of the customer's documents and pages; null: the account's default. */
  preferredLocale: string | null;
  /** E.164, or null. */
  phone: string | null;
  /** In the order given; empty when none. */
  taxIds: TaxId[];
}

export interface CustomerFields {
  name?: string;
  email?: string;
  metadata?: Metadata;
  /** null removes the address. */
  address?: Address | null;
  taxExempt?: string;
  /** '' or null clears it. */
  preferredLocale?: string | null;
  /** '' or null clears it. */
  phone?: string | null;
  /** Replaces the whole list; null or [] removes every tax id. */
  taxIds?: readonly { type: string; value: string }[] | null;
}

/** The fields a customer.updated may report as changed, in their public order. */
export const CUSTOMER_CHANGEABLE_FIELDS = ['name', 'email', 'metadata', 'address', 'tax_exempt', 'preferred_locale', 'phone', 'tax_ids'] as const;
export type CustomerChangeableField = (typeof CUSTOMER_CHANGEABLE_FIELDS)[number];

/** Who changed a customer: the account through the API, or the customer in the customer portal. */
export const CUSTOMER_CHANGE_SOURCES = ['api', 'portal'] as const;
export type CustomerChangeSource = (typeof CUSTOMER_CHANGE_SOURCES)[number];

/** `''` (an older caller) is `api`; anything else unknown is refused. */
export function checkChangeSource(source: string): CustomerChangeSource {
  if (source === '') return 'api';
  if ((CUSTOMER_CHANGE_SOURCES as readonly string[]).includes(source)) return source as CustomerChangeSource;
  throw invalidArgument('source', `source must be one of ${CUSTOMER_CHANGE_SOURCES.join(', ')}`);
}

/**
 * What happened to a customer, in the domain's words. The edge translates each into an
 * integration event and, where the specification defines one, a public webhook event.
 */
export type CustomerEvent =
  | { kind: 'created'; customer: Customer }
  | { kind: 'updated'; customer: Customer; previous: Customer; changedFields: CustomerChangeableField[]; source: CustomerChangeSource }
  | { kind: 'deleted'; customer: Customer };

/** A customer after a change, with the events the change recorded; the use case saves both at once. */
export interface CustomerChange {
  customer: Customer;
  events: CustomerEvent[];
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

export function createCustomer(
  tenant: TenantRef,
  fields: Required<Pick<CustomerFields, 'name' | 'email'>> & CustomerFields & { testClockId?: string | null },
  now: Date,
): CustomerChange {
  const customer: Customer = {
    id: newId('cus'),
    tenant,
    name: checkName(fields.name),
    email: checkEmail(fields.email),
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
    testClockId: fields.testClockId ?? null,
    address: checkAddress(fields.address),
    taxExempt: checkTaxExempt(fields.taxExempt),
    preferredLocale: checkPreferredLocale(fields.preferredLocale),
    phone: checkPhone(fields.phone),
    taxIds: checkTaxIds(fields.taxIds),
  };
  return { customer, events: [{ kind: 'created', customer }] };
}

function assertNotDeleted(customer: Customer): void {
  if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot change.`);
}

export function updateCustomer(customer: Customer, fields: CustomerFields, now: Date, source: CustomerChangeSource = 'api'): CustomerChange {
  assertNotDeleted(customer);
  const updated: Customer = {
    ...customer,
    name: fields.name === undefined ? customer.name : checkName(fields.name),
    email: fields.email === undefined ? customer.email : checkEmail(fields.email),
    metadata: fields.metadata === undefined ? customer.metadata : checkMetadata(mergeMetadata(customer.metadata, fields.metadata)),
    address: fields.address === undefined ? customer.address : checkAddress(fields.address),
    taxExempt: fields.taxExempt === undefined ? customer.taxExempt : checkTaxExempt(fields.taxExempt),
    preferredLocale: fields.preferredLocale === undefined ? customer.preferredLocale : checkPreferredLocale(fields.preferredLocale),
    phone: fields.phone === undefined ? customer.phone : checkPhone(fields.phone),
    taxIds: fields.taxIds === undefined ? customer.taxIds : checkTaxIds(fields.taxIds),
    updatedAt: now,
  };
  return { customer: updated, events: [{ kind: 'updated', customer: updated, previous: customer, changedFields: changedFields(customer, updated), source }] };
}

function changedFields(before: Customer, after: Customer): CustomerChangeableField[] {
  return CUSTOMER_CHANGEABLE_FIELDS.filter((field) =>
    field === 'metadata' ? !sameMetadata(before.metadata, after.metadata)
      : field === 'address' ? JSON.stringify(before.address) !== JSON.stringify(after.address)
      : field === 'tax_ids' ? JSON.stringify(before.taxIds) !== JSON.stringify(after.taxIds)
        : field === 'tax_exempt' ? before.taxExempt !== after.taxExempt
          : field === 'preferred_locale' ? before.preferredLocale !== after.preferredLocale
          : before[field] !== after[field]);
}

/** Equal key/value pairs, in any order (the database does not keep key order). */
function sameMetadata(a: Metadata, b: Metadata): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && a[key] === b[key]);
}

export function deleteCustomer(customer: Customer, now: Date): CustomerChange {
  assertNotDeleted(customer);
  const deleted: Customer = { ...customer, deletedAt: now, updatedAt: now };
  return { customer: deleted, events: [{ kind: 'deleted', customer: deleted }] };
}
