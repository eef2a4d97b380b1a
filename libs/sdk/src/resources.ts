import type { Client } from 'openapi-fetch';
import { errorFromResponse } from './errors';
import type { components, paths } from './generated/openapi';
import { type Page, type PageCursor, PageRequest } from './pagination';

export type Schemas = components['schemas'];
export type Customer = Schemas['Customer'];
export type Plan = Schemas['Plan'];
export type Subscription = Schemas['Subscription'];
export type Invoice = Schemas['Invoice'];
export type Payment = Schemas['Payment'];
export type CreditNote = Schemas['CreditNote'];
export type Refund = Schemas['Refund'];
export type Event = Schemas['Event'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type Wallet = Schemas['Wallet'];

/** The JSON body of an operation. */
type BodyOf<Operation> = Operation extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;
/** The query parameters of an operation: its filters, `limit`, and where the first page starts (`offset` or a cursor). */
type ListParams<Operation> = Operation extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;

export interface RequestOptions {
  /** Sent as `Idempotency-Key` on a POST; without it the client makes one, reused on its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

type Answer<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/** The answer's data, or its typed error (errors.ts). */
async function answer<T>(pending: Answer<T>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw errorFromResponse(response.status, error, response.headers);
  return data as T;
}

const init = (options?: RequestOptions) => ({
  ...(options?.idempotencyKey ? { headers: { 'Idempotency-Key': options.idempotencyKey } } : {}),
  ...(options?.signal ? { signal: options.signal } : {}),
});

/**
 * A `list()`: awaited, the first page (as `params` ask); iterated, every item, the pages after the
 * first read by cursor from where the one before ended (PageRequest), `params`' filters kept.
 */
function list<T extends { id: string }, Q extends { offset?: number; starting_after?: string; ending_before?: string }>(params: Q | undefined, fetchPage: (query: Q) => Answer<Page<T>>): PageRequest<T> {
  const { offset, starting_after, ending_before, ...filters } = params ?? ({} as Q);
  const first = { ...filters, offset, starting_after, ending_before } as Q;
  return new PageRequest<T>((cursor?: PageCursor) => answer(fetchPage(cursor === undefined ? first : ({ ...filters, ...cursor } as Q))), ending_before !== undefined);
}

type Api = Client<paths>;

export class Customers {
  constructor(private readonly api: Api) {}
  create(body: BodyOf<paths['/v1/customers']['post']>, options?: RequestOptions): Promise<Customer> {
    return answer(this.api.POST('/v1/customers', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Customer> {
    return answer(this.api.GET('/v1/customers/{id}', { params: { path: { id } }, ...init(options) }));
  }
  update(id: string, body: BodyOf<paths['/v1/customers/{id}']['patch']>, options?: RequestOptions): Promise<Customer> {
    return answer(this.api.PATCH('/v1/customers/{id}', { params: { path: { id } }, body, ...init(options) }));
  }
  del(id: string, options?: RequestOptions): Promise<Customer> {
    return answer(this.api.DELETE('/v1/customers/{id}', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/customers']['get']>): PageRequest<Customer> {
    return list(params, (query) => this.api.GET('/v1/customers', { params: { query } }));
  }
}

export class Plans {
  constructor(private readonly api: Api) {}
  create(body: BodyOf<paths['/v1/plans']['post']>, options?: RequestOptions): Promise<Plan> {
    return answer(this.api.POST('/v1/plans', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Plan> {
    return answer(this.api.GET('/v1/plans/{id}', { params: { path: { id } }, ...init(options) }));
  }
  update(id: string, body: BodyOf<paths['/v1/plans/{id}']['patch']>, options?: RequestOptions): Promise<Plan> {
    return answer(this.api.PATCH('/v1/plans/{id}', { params: { path: { id } }, body, ...init(options) }));
  }
  /** Archives the plan (`DELETE`): no new subscriptions; existing ones go on. */
  archive(id: string, options?: RequestOptions): Promise<Plan> {
    return answer(this.api.DELETE('/v1/plans/{id}', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/plans']['get']>): PageRequest<Plan> {
    return list(params, (query) => this.api.GET('/v1/plans', { params: { query } }));
  }
}

export class Subscriptions {
  constructor(private readonly api: Api) {}
  create(body: BodyOf<paths['/v1/subscriptions']['post']>, options?: RequestOptions): Promise<Subscription> {
    return answer(this.api.POST('/v1/subscriptions', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Subscription> {
    return answer(this.api.GET('/v1/subscriptions/{id}', { params: { path: { id } }, ...init(options) }));
  }
  cancel(id: string, body: BodyOf<paths['/v1/subscriptions/{id}/cancel']['post']> = {}, options?: RequestOptions): Promise<Subscription> {
    return answer(this.api.POST('/v1/subscriptions/{id}/cancel', { params: { path: { id } }, body, ...init(options) }));
  }
  upcomingInvoice(id: string, options?: RequestOptions): Promise<Schemas['UpcomingInvoice']> {
    return answer(this.api.GET('/v1/subscriptions/{id}/upcoming-invoice', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/subscriptions']['get']>): PageRequest<Subscription> {
    return list(params, (query) => this.api.GET('/v1/subscriptions', { params: { query } }));
  }
}

export class Invoices {
  constructor(private readonly api: Api) {}
  create(body: BodyOf<paths['/v1/invoices']['post']>, options?: RequestOptions): Promise<Invoice> {
    return answer(this.api.POST('/v1/invoices', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Invoice> {
    return answer(this.api.GET('/v1/invoices/{id}', { params: { path: { id } }, ...init(options) }));
  }
  finalize(id: string, options?: RequestOptions): Promise<Invoice> {
    return answer(this.api.POST('/v1/invoices/{id}/finalize', { params: { path: { id } }, ...init(options) }));
  }
  void(id: string, options?: RequestOptions): Promise<Invoice> {
    return answer(this.api.POST('/v1/invoices/{id}/void', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/invoices']['get']>): PageRequest<Invoice> {
    return list(params, (query) => this.api.GET('/v1/invoices', { params: { query } }));
  }
}

export class Payments {
  constructor(private readonly api: Api) {}
  /** Starts collecting an invoice from a mobile-money number; the answer's `redirectUrl` is the payer's page. */
  initiate(body: BodyOf<paths['/v1/payments/initiate']['post']>, options?: RequestOptions): Promise<Payment> {
    return answer(this.api.POST('/v1/payments/initiate', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Payment> {
    return answer(this.api.GET('/v1/payments/{id}', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/payments']['get']>): PageRequest<Payment> {
    return list(params, (query) => this.api.GET('/v1/payments', { params: { query } }));
  }
}

export class Refunds {
  constructor(private readonly api: Api) {}
  /** Refunds a paid invoice; answers its credit note. */
  create(body: BodyOf<paths['/v1/refunds']['post']>, options?: RequestOptions): Promise<CreditNote> {
    return answer(this.api.POST('/v1/refunds', { body, ...init(options) })) as Promise<CreditNote>;
  }
  list(params?: ListParams<paths['/v1/refunds']['get']>): PageRequest<CreditNote> {
    return list(params, (query) => this.api.GET('/v1/refunds', { params: { query } }));
  }
}

export class Events {
  constructor(private readonly api: Api) {}
  retrieve(id: string, options?: RequestOptions): Promise<Event> {
    return answer(this.api.GET('/v1/events/{id}', { params: { path: { id } }, ...init(options) }));
  }
  /** The account's events, newest first (`type`, `created_gte`, `created_lte`, `resource` filters). */
  list(params?: ListParams<paths['/v1/events']['get']>): PageRequest<Event> {
    return list(params, (query) => this.api.GET('/v1/events', { params: { query } }));
  }
}

export class WebhookEndpoints {
  constructor(private readonly api: Api) {}
  /** The answer carries the endpoint's signing `secret`, once. */
  create(body: BodyOf<paths['/v1/webhooks']['post']>, options?: RequestOptions): Promise<WebhookEndpoint> {
    return answer(this.api.POST('/v1/webhooks', { body, ...init(options) }));
  }
  update(id: string, body: BodyOf<paths['/v1/webhooks/{id}']['patch']>, options?: RequestOptions): Promise<WebhookEndpoint> {
    return answer(this.api.PATCH('/v1/webhooks/{id}', { params: { path: { id } }, body, ...init(options) }));
  }
  del(id: string, options?: RequestOptions): Promise<Schemas['DeletedWebhookEndpoint']> {
    return answer(this.api.DELETE('/v1/webhooks/{id}', { params: { path: { id } }, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/webhooks']['get']>): PageRequest<WebhookEndpoint> {
    return list(params, (query) => this.api.GET('/v1/webhooks', { params: { query } }));
  }
}

export class Wallets {
  constructor(private readonly api: Api) {}
  create(body: BodyOf<paths['/v1/wallets']['post']>, options?: RequestOptions): Promise<Wallet> {
    return answer(this.api.POST('/v1/wallets', { body, ...init(options) }));
  }
  retrieve(id: string, options?: RequestOptions): Promise<Wallet> {
    return answer(this.api.GET('/v1/wallets/{id}', { params: { path: { id } }, ...init(options) }));
  }
  topUp(id: string, body: BodyOf<paths['/v1/wallets/{id}/top-ups']['post']>, options?: RequestOptions): Promise<Schemas['WalletTopUp']> {
    return answer(this.api.POST('/v1/wallets/{id}/top-ups', { params: { path: { id } }, body, ...init(options) }));
  }
  list(params?: ListParams<paths['/v1/wallets']['get']>): PageRequest<Wallet> {
    return list(params, (query) => this.api.GET('/v1/wallets', { params: { query } }));
  }
}
