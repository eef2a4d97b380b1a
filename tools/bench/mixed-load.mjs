// A small mixed load of `/v1` with the retries an integrator's client makes, for benches that
// disturb the stack while it runs (tools/bench/upgrade.mjs). Kept on its own so another bench can
// drive the same load.
//
// Operations, in turn per worker: create a customer, create an open one-off invoice for one of
// this load's customers, read a customer, list invoices. Every POST carries an Idempotency-Key
// that its retries reuse (docs/api/conventions.md#idempotency), so a retried create lands on the
// same resource. A request is retried on a dropped connection, a timeout, a 5xx, a 429
// (after Retry-After) or 409 idempotency_key_in_progress, at most RETRIES times, 250 ms × 2ⁿ apart.
// What the load created is recorded by its marker (the customer's e-mail, the invoice's
// description), so a bench can compare it with the events a webhook receiver saw.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const RETRIES = 5;
const BACKOFF_MS = 250;
const REQUEST_TIMEOUT_MS = 15_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** True for an answer a client retries (same Idempotency-Key): the server may not have done it, or not yet. */
function retryable(status, body) {
  if (status >= 500 || status === 429) return true;
  return status === 409 && /idempotency_key_in_progress/.test(body);
}

/**
 * Starts `concurrency` workers against `url` with `key` until `stop()`; `stop()` resolves to the tally:
 * requests, retries, failures beyond the retries (each with its route and last answer) and the
 * created customers and invoices by marker.
 */
export function startMixedLoad({ url, key, concurrency = 4, pauseMs = 0 }) {
  const { Pool } = require('undici');
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const run = randomBytes(3).toString('hex');
  const tally = { requests: 0, attempts: 0, retried: 0, retryCauses: {}, failures: [], customers: new Map(), invoices: new Map(), byOperation: {} };
  let stopping = false;

  /** One request with the client's retries; answers the final { status, body } or throws after the last retry. */
  async function send(operation, method, path, body) {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const idempotencyKey = method === 'POST' ? `load-${run}-${randomBytes(8).toString('hex')}` : undefined;
    const headers = { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) };
    tally.requests++;
    const counts = (tally.byOperation[operation] ??= { requests: 0, retried: 0, failed: 0 });
    counts.requests++;
    let last;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      if (attempt > 0) {
        const cause = last.status === 0 ? last.body.trim().split(' ')[0] || 'network error' : String(last.status);
        tally.retryCauses[cause] = (tally.retryCauses[cause] ?? 0) + 1;
        tally.retried++;
        counts.retried++;
        const retryAfter = Number(last?.retryAfter);
        await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : BACKOFF_MS * 2 ** (attempt - 1));
      }
      tally.attempts++;
      try {
        const response = await pool.request({ method, path, headers, body: payload, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
        const text = await response.body.text();
        last = { status: response.statusCode, body: text, retryAfter: response.headers['retry-after'] };
        if (!retryable(response.statusCode, text)) break;
      } catch (error) {
        last = { status: 0, body: `${error.code ?? ''} ${error.message}` };
      }
    }
    const ok = last.status >= 200 && last.status < 300;
    if (!ok) {
      counts.failed++;
      tally.failures.push({ operation, route: `${method} ${path.split('?')[0]}`, status: last.status, body: last.body.slice(0, 300), at: new Date().toISOString() });
    }
    return { ok, status: last.status, body: ok && last.body ? JSON.parse(last.body) : undefined };
  }

  const operations = [
    async (worker, i) => {
      const marker = `load-${run}-${worker}-${i}@example.com`;
      const answer = await send('create customer', 'POST', '/v1/customers', { name: `Load ${worker}-${i}`, email: marker });
      if (answer.ok) tally.customers.set(marker, answer.body.id);
    },
    async (worker, i) => {
      const customers = [...tally.customers.values()];
      if (customers.length === 0) return;
      const marker = `Load ${run} ${worker}-${i}`;
      const answer = await send('create invoice', 'POST', '/v1/invoices', { customer: customers[i % customers.length], amount: 1_000 + i, currency: 'zmw', description: marker, status: 'open' });
      if (answer.ok) tally.invoices.set(marker, answer.body.id);
    },
    async (worker, i) => {
      const customers = [...tally.customers.values()];
      if (customers.length > 0) await send('read customer', 'GET', `/v1/customers/${customers[(worker + i) % customers.length]}`);
    },
    async () => send('list invoices', 'GET', '/v1/invoices?limit=10'),
  ];

  const workers = Array.from({ length: concurrency }, async (_, worker) => {
    for (let i = 0; !stopping; i++) {
      await operations[i % operations.length](worker, i);
      if (pauseMs > 0) await sleep(pauseMs);
    }
  });

  return {
    tally,
    async stop() {
      stopping = true;
      await Promise.all(workers);
      await pool.close();
      return tally;
    },
  };
}

/**
 * Compares what the load created with the events a receiver got (parsed envelopes): per created
 * resource, the distinct events of its type about it. None is a lost event; two or more a
 * duplicated one (the same change announced twice). The same event delivered again (one id, two
 * deliveries) is at-least-once delivery, which receivers dedupe by id: counted apart.
 */
export function compareEvents(tally, events) {
  const byObject = new Map();
  let redelivered = 0;
  const seenIds = new Set();
  for (const event of events) {
    if (seenIds.has(event.id)) {
      redelivered++;
      continue;
    }
    seenIds.add(event.id);
    const keyOf = `${event.type} ${event.data?.object?.id}`;
    byObject.set(keyOf, (byObject.get(keyOf) ?? 0) + 1);
  }
  const check = (type, ids) => {
    const lost = ids.filter((id) => !byObject.has(`${type} ${id}`));
    const duplicated = ids.filter((id) => (byObject.get(`${type} ${id}`) ?? 0) > 1);
    return { type, created: ids.length, lost, duplicated };
  };
  // A create retried after a lost answer must not make a second resource: one id per marker, and one resource per marker among the events.
  const markersOf = (type, field) => {
    const counts = new Map();
    for (const event of events.filter((e) => e.type === type)) {
      const marker = event.data?.object?.[field];
      if (!marker) continue;
      counts.set(marker, new Set([...(counts.get(marker) ?? []), event.data.object.id]));
    }
    return [...counts].filter(([, ids]) => ids.size > 1).map(([marker]) => marker);
  };
  return {
    checks: [check('customer.created', [...tally.customers.values()]), check('invoice.created', [...tally.invoices.values()])],
    createdTwice: [...markersOf('customer.created', 'email'), ...markersOf('invoice.created', 'description')],
    redelivered,
  };
}
