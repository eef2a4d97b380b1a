import type { Customer } from '../gen/recur/subscription/v1/customer_pb';

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
  };
}
