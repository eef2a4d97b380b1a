import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi';
import { Customers, Events, Invoices, Payments, Plans, Refunds, Subscriptions, Wallets, WebhookEndpoints } from './resources';
import { DEFAULT_RETRY_POLICY, retryingFetch, type RetryPolicy } from './retry';

export interface RecurOptions extends Partial<RetryPolicy> {
  /** Where the gateway answers; default `RECUR_BASE_URL`, else `http://localhost:8080` (`npm start`). */
  baseUrl?: string;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
}

/** This package's version (its package.json: Changesets moves it), sent in `User-Agent`. */
export const SDK_VERSION: string = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * One client per API key: the key decides the account and the app (sandbox or live), so a
 * program working with two keys makes two clients. Every call is typed from the OpenAPI document;
 * a refusal throws a {@link RecurError}; POSTs carry an `Idempotency-Key` and every call is
 * retried on 429, 5xx, 409 idempotency_key_in_progress and lost connections (retry.ts).
 */
export class Recur {
  /** Every `/v1` route, typed (openapi-fetch): for the routes the resources below do not cover. */
  readonly api: Client<paths>;
  readonly customers: Customers;
  readonly plans: Plans;
  readonly subscriptions: Subscriptions;
  readonly invoices: Invoices;
  readonly payments: Payments;
  readonly refunds: Refunds;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly wallets: Wallets;

  constructor(apiKey: string, options: RecurOptions = {}) {
    if (!apiKey || typeof apiKey !== 'string') throw new TypeError('Recur: an API key is required (recur_test_sk_… or recur_live_sk_…)');
    const { baseUrl = process.env.RECUR_BASE_URL ?? 'http://localhost:8080', fetch: baseFetch, ...policy } = options;
    const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...Object.fromEntries(Object.entries(policy).filter(([, value]) => value !== undefined)) };
    this.api = createClient<paths>({
      baseUrl: baseUrl.replace(/\/+$/, ''),
      headers: { 'x-api-key': apiKey, 'user-agent': `recur-node/${SDK_VERSION}` },
      fetch: retryingFetch(retry, baseFetch),
    });
    this.customers = new Customers(this.api);
    this.plans = new Plans(this.api);
    this.subscriptions = new Subscriptions(this.api);
    this.invoices = new Invoices(this.api);
    this.payments = new Payments(this.api);
    this.refunds = new Refunds(this.api);
    this.events = new Events(this.api);
    this.webhookEndpoints = new WebhookEndpoints(this.api);
    this.wallets = new Wallets(this.api);
  }
}
