import type { Address, Customer } from '../gen/recur/subscription/v1/customer_pb';

/**
 * The public JSON of a customer: what `/v1/customers` answers and what customer.*
 * events carry in `data.object`. Defined once, used by the gateway and the producer.
 * Times are unix seconds; int64 travels as bigint and is safe as a number until year 285 616.
 */
export interface CustomerJson {
  id: string;
  object: 'customer';
  livemode: boolean;
  name: string;
  email: string;
  metadata: Record<string, string>;
  created: number;
  updated: number;
  deleted: boolean;
  deleted_at: number | null;
  /** The sandbox test clock the customer lives on, or null. */
  test_clock: string | null;
  /** The postal address, or null (docs/api/customers.md#address-and-tax-status). */
  address: AddressJson | null;
  /** none, exempt or reverse. */
  tax_exempt: string;
  /** The language of the customer's documents and pages (`en`, `fr`), or null: the account's default (docs/api/customers.md#language). */
  preferred_locale: string | null;
  /** E.164 (`+221771234567`), or null (docs/api/customers.md#address-and-tax-status). */
  phone: string | null;
  /** The customer's tax ids, at most five, in order; [] when none (docs/api/customers.md#tax-ids). */
  tax_ids: TaxIdJson[];
}

export interface TaxIdJson {
  /** Stripe's type name: `eu_vat`, `ke_pin`, `sn_ninea`… */
  type: string;
  value: string;
}

export interface AddressJson {
  line1: string | null;
  line2: string | null;
  city: string | null;
  region: string | null;
  postal_code: string | null;
  country: string | null;
}

export function presentCustomer(customer: Customer): CustomerJson {
  return {
    id: customer.id,
    object: 'customer',
    livemode: customer.livemode,
    name: customer.name,
    email: customer.email,
    metadata: { ...customer.metadata },
    created: Number(customer.created),
    updated: Number(customer.updated),
    deleted: customer.deletedAt !== undefined,
    deleted_at: customer.deletedAt === undefined ? null : Number(customer.deletedAt),
    test_clock: customer.testClockId ?? null,
    address: customer.address === undefined ? null : presentAddress(customer.address),
    tax_exempt: customer.taxExempt || 'none',
    preferred_locale: customer.preferredLocale || null,
    phone: customer.phone || null,
    tax_ids: customer.taxIds.map(({ type, value }) => ({ type, value })),
  };
}

export function presentAddress(address: Pick<Address, 'line1' | 'line2' | 'city' | 'region' | 'postalCode' | 'country'>): AddressJson {
  return {
    line1: address.line1 || null,
    line2: address.line2 || null,
    city: address.city || null,
    region: address.region || null,
    postal_code: address.postalCode || null,
    country: address.country || null,
  };
}
