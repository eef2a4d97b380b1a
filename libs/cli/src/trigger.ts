import { type Customer, errorFromResponse, type Event, type Recur } from '@recur/node';

/** The sandbox numbers whose last six digits decide a payment (docs/sandbox.md#magic-numbers). */
const SUCCEEDS = '+260971000001';
const INSUFFICIENT_FUNDS = '+260971000002';

/** One resource a trigger made, printed as it is made. */
export interface Made {
  object: string;
  id: string;
  note?: string;
}

interface Fixture {
  /** What it makes, for `recur trigger --help`. */
  description: string;
  /** Makes the resources; returns the id of the resource the event is about. */
  run(recur: Recur, made: (item: Made) => void): Promise<string>;
}

/** The answer of a `recur.api` call, or its typed error (as the SDK's resources do). */
async function answer<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw errorFromResponse(response.status, error, response.headers);
  return data as T;
}

async function customer(recur: Recur, made: (item: Made) => void, name = 'Trigger customer'): Promise<Customer> {
  const created = await recur.customers.create({ name, email: 'trigger@example.com', metadata: { made_by: 'recur trigger' } });
  made({ object: 'customer', id: created.id });
  return created;
}

async function subscription(recur: Recur, made: (item: Made) => void): Promise<string> {
  const { id: customerId } = await customer(recur, made);
  const plan = await recur.plans.create({ name: 'Trigger plan', pricing_model: 'flat_rate', amount_monthly: 10_000, currency: 'zmw' });
  made({ object: 'plan', id: plan.id });
  const created = await recur.subscriptions.create({ customer: customerId, plan: plan.id, billing_interval: 'monthly' });
  made({ object: 'subscription', id: created.id });
  return created.id;
}

/** An open one-off invoice collected at once from a saved mobile-money number (docs/api/payment-methods.md). */
async function chargedInvoice(recur: Recur, made: (item: Made) => void, phoneNumber: string): Promise<string> {
  const { id: customerId } = await customer(recur, made);
  const method = await answer(recur.api.POST('/v1/customers/{id}/payment-methods', { params: { path: { id: customerId } }, body: { phone_number: phoneNumber, provider: 'MTN_MOMO_ZMB', consent: true } }));
  made({ object: 'payment_method', id: method.id, note: phoneNumber });
  const invoice = await recur.invoices.create({ customer: customerId, amount: 10_000, description: 'Triggered invoice', currency: 'zmw', status: 'open', collection_method: 'charge_automatically' });
  made({ object: 'invoice', id: invoice.id, note: 'open, charge_automatically' });
  return invoice.id;
}

async function openInvoice(recur: Recur, made: (item: Made) => void): Promise<string> {
  const { id: customerId } = await customer(recur, made);
  const invoice = await recur.invoices.create({ customer: customerId, amount: 10_000, description: 'Triggered invoice', currency: 'zmw', status: 'open' });
  made({ object: 'invoice', id: invoice.id, note: 'open' });
  return invoice.id;
}

/** What `recur trigger` can cause, each by the calls an integrator would make in the sandbox. */
export const FIXTURES: Record<string, Fixture> = {
  'customer.created': { description: 'a customer', run: async (recur, made) => (await customer(recur, made)).id },
  'customer.updated': {
    description: 'a customer, then renamed',
    run: async (recur, made) => {
      const { id } = await customer(recur, made);
      await recur.customers.update(id, { name: 'Trigger customer, renamed' });
      made({ object: 'customer', id, note: 'renamed' });
      return id;
    },
  },
  'customer.deleted': {
    description: 'a customer, then deleted',
    run: async (recur, made) => {
      const { id } = await customer(recur, made);
      await recur.customers.del(id);
      made({ object: 'customer', id, note: 'deleted' });
      return id;
    },
  },
  'subscription.created': { description: 'a customer, a monthly plan and a subscription to it', run: subscription },
  'subscription.paused': {
    description: 'a subscription, then paused',
    run: async (recur, made) => {
      const id = await subscription(recur, made);
      await answer(recur.api.POST('/v1/subscriptions/{id}/pause', { params: { path: { id } }, body: {} }));
      made({ object: 'subscription', id, note: 'paused' });
      return id;
    },
  },
  'subscription.cancelled': {
    description: 'a subscription, then cancelled at once',
    run: async (recur, made) => {
      const id = await subscription(recur, made);
      await recur.subscriptions.cancel(id);
      made({ object: 'subscription', id, note: 'cancelled' });
      return id;
    },
  },
  'invoice.created': { description: 'a customer and an open one-off invoice', run: openInvoice },
  'invoice.voided': {
    description: 'an open one-off invoice, then voided',
    run: async (recur, made) => {
      const id = await openInvoice(recur, made);
      await recur.invoices.void(id);
      made({ object: 'invoice', id, note: 'voided' });
      return id;
    },
  },
  'invoice.paid': {
    description: `an open invoice charged automatically to ${SUCCEEDS} (the sandbox approves it)`,
    run: (recur, made) => chargedInvoice(recur, made, SUCCEEDS),
  },
  'invoice.payment_failed': {
    description: `an open invoice charged automatically to ${INSUFFICIENT_FUNDS} (insufficient_funds)`,
    run: (recur, made) => chargedInvoice(recur, made, INSUFFICIENT_FUNDS),
  },
};

export interface TriggerResult {
  resource: string;
  /** The event caused, once the events API shows it; undefined when it did not within the wait. */
  event?: Event;
}

/**
 * Makes the resources of `type`'s fixture, then waits (up to `waitMs`) until the events API
 * shows the event of that type about the resource.
 */
export async function trigger(recur: Recur, type: string, made: (item: Made) => void, waitMs: number): Promise<TriggerResult> {
  const fixture = FIXTURES[type];
  if (!fixture) throw new Error(`cannot trigger '${type}'`);
  const resource = await fixture.run(recur, made);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [event] = (await recur.events.list({ resource, type: type as Event['type'], limit: 1 })).data;
    if (event || Date.now() >= deadline) return { resource, event };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
