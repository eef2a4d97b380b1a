#!/usr/bin/env node
// What Recur does when parts of it fail, as Kubernetes runs it: every app its own process, one
// durable PostgreSQL, a Kafka broker of its own, a real webhook receiver, under a steady mixed load
// (customers, subscriptions with usage records, invoices paid through the sandbox payer page,
// subscriptions on test clocks advanced into a renewal). Every POST carries an Idempotency-Key and
// is retried with the same key on no answer or a 5xx, as an SDK would. Faults come one at a time,
// each followed by its recovery: kill -9 of each app in turn and of two at once, the broker stopped
// and restarted, PostgreSQL killed -9 and restarted, and network faults through Toxiproxy between
// the gateway and the subscription service and between that service and PostgreSQL (latency,
// connection resets, a 10 s partition).
//
//   npm run bench:faults                     # every fault (about 15 minutes on 2 cores)
//   npm run bench:faults -- --short          # one kill -9 of each kind of app, one broker restart,
//                                            # one PostgreSQL kill (the form `npm test` runs)
//   npm run bench:faults -- --only kill-gateway,postgres-kill   # the faults named
//   options: --workers N (load workers, 3; --short 2), --json FILE (the rows, for a test to read);
//   RECUR_SKIP_BUILD=1 skips the install-and-build step
//
// After each fault the load stops, the stack settles, and the run checks from the outside (the
// API, the receiver) and from the databases: 2xx answers whose resource is gone, changes whose
// event never reached the event log and the receiver, side effects done twice; and counts 5xx
// answers and unanswered requests from the fault on, and how long until the last of them. It
// prints a Markdown row per fault and exits 1 when any must-be-0 column is not 0.
// docs/performance.md#faults has a run's table; docs/development.md#the-fault-suite how to read it.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../bootstrap.mjs';
import { databaseName, printWarnings, SERVICES, startProcesses, v1Client } from './harness.mjs';

const { values: args } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    only: { type: 'string' },
    workers: { type: 'string' },
    json: { type: 'string' },
  },
});
const SHORT = args.short;
// Stopped from outside (Ctrl-C, a test's timeout): exit, so the 'exit' hooks stop every process started here.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(1));
/** What stops this run's processes on exit, however it exits: registered first, so no other hook that throws can skip it. */
const onExit = [];
process.on('exit', () => {
  for (const stop of onExit) {
    try {
      stop();
    } catch {
      // The others still run.
    }
  }
});
const WORKERS = Number(args.workers ?? (SHORT ? 2 : 3));
/** Load before a fault, and after its recovery, in seconds. */
const LEAD_S = SHORT ? 3 : 5;
const TRAIL_S = SHORT ? 6 : 12;
/** How long a client keeps retrying one request (same key) before it gives up. */
const RETRY_BUDGET_MS = 120_000;
/** A request's own bound: past it, the client takes it as unanswered and retries. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long the checks wait for the stack to settle (events delivered, payments applied, renewals done). */
const SETTLE_MS = 120_000;

// RECUR_SKIP_BUILD=1: already built (the mesh test that runs the short form, after npm test's build).
if (process.env.RECUR_SKIP_BUILD !== '1') execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { queryDatabase, startWebhookReceiver, sleep } = require('@recur/testing');
const EVENT_TYPES = Object.keys(require('@recur/vocabulary').SUBSCRIBABLE_EVENT_TYPES);

// ---------------------------------------------------------------------------------------------
// Toxiproxy: a real TCP proxy whose faults ("toxics") are switched on and off over its HTTP API.

async function startToxiproxy() {
  const binary = execFileSync(join(ROOT, 'tools', 'bench', 'ensure-toxiproxy.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const { freePort } = require('@recur/testing');
  const port = await freePort();
  const child = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], { stdio: 'ignore' });
  onExit.push(() => child.kill('SIGKILL'));
  const api = `http://127.0.0.1:${port}`;
  const request = async (method, path, body) => {
    const response = await fetch(`${api}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!response.ok) throw new Error(`toxiproxy ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.headers.get('content-type')?.includes('json') ? response.json() : response.text();
  };
  for (let tries = 0; ; tries++) {
    try {
      await request('GET', '/version');
      break;
    } catch (error) {
      if (tries > 100) throw error;
      await sleep(100);
    }
  }
  return {
    /** A proxy named `name` to `upstream` (`host:port`); answers its `host:port`. */
    async through(name, upstream) {
      const listen = `127.0.0.1:${await freePort()}`;
      await request('POST', '/proxies', { name, listen, upstream, enabled: true });
      return listen;
    },
    /** Adds toxics (`[{ type, attributes, stream }]`) to proxy `name`; answers a function that removes them. */
    async toxic(name, toxics) {
      const names = [];
      for (const [index, toxic] of toxics.entries()) {
        const toxicName = `${toxic.type}-${toxic.stream}-${index}`;
        await request('POST', `/proxies/${name}/toxics`, { name: toxicName, toxicity: 1, ...toxic });
        names.push(toxicName);
      }
      return async () => {
        for (const toxicName of names) await request('DELETE', `/proxies/${name}/toxics/${toxicName}`);
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The stack

/** Toxiproxy (built with Go on a first run) only for the network faults (`gateway-…`, `database-…`): the short form runs without. */
const NETWORK_FAULT = /^(gateway|database)-/;
const withNetworkFaults = args.only ? args.only.split(',').some((name) => NETWORK_FAULT.test(name)) : !SHORT;
const toxiproxy = withNetworkFaults ? await startToxiproxy() : undefined;
const receiver = await startWebhookReceiver();
onExit.push(() => void receiver.stop());
/** The network faults' hops: the gateway's calls to subscription, subscription's to PostgreSQL. */
const PROXIED_SERVICE = 'subscription';
console.error('starting PostgreSQL, a Kafka broker and the seven apps, each its own process…');
const stack = await startProcesses({
  name: 'faults',
  scaled: 'gateway',
  ownBroker: true,
  appEnv: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } },
  proxied: toxiproxy && { gatewayTo: [PROXIED_SERVICE], databaseOf: [PROXIED_SERVICE], through: (name, upstream) => toxiproxy.through(name, upstream) },
});
const { infrastructure } = stack;
onExit.push(() => stack.apps.forEach((app) => void app.kill('SIGKILL')));
const appNamed = (name) => stack.apps.find((app) => app.app === name);

// The kubelet's part: an app that exits when no fault killed it has crashed; it is restarted (its
// readiness waited for, up to five tries), and the crash counted in the fault's row with the last
// lines it wrote.
/** Apps a fault is killing and restarting itself. */
const killedByFault = new Set();
/** Crashes since the last row: app, when, the end of its output. */
let crashes = [];
let shuttingDown = false;
for (const app of stack.apps) {
  void (async () => {
    for (;;) {
      const pid = app.pid;
      await app.exited();
      if (shuttingDown) return;
      if (killedByFault.has(app.app)) {
        while (app.pid === pid && !shuttingDown) await sleep(200);
        continue;
      }
      const tail = app.output().trimEnd().split('\n').slice(-15).join('\n');
      crashes.push({ app: app.app, at: Date.now(), tail });
      console.error(`${app.app} (pid ${pid}) exited on its own; restarting it. Its last lines:\n${tail}`);
      for (let attempt = 1; ; attempt++) {
        try {
          await app.restart();
          break;
        } catch (error) {
          if (attempt === 5 || shuttingDown) throw error;
          await sleep(2_000 * attempt);
        }
      }
    }
  })();
}
const api = v1Client(stack, 4 * WORKERS + 8);

// ---------------------------------------------------------------------------------------------
// The client: every attempt logged, POSTs retried with their key as an SDK retries them.

/** Every attempt: when it was sent (ms), what came back (an HTTP status, or 'none'). */
const attempts = [];
/** Requests the client gave up on (still failing after RETRY_BUDGET_MS). */
let gaveUp = 0;
const isRetryable = (status, body) => status >= 500 || status === 429 || (status === 409 && body?.error?.code === 'idempotency_key_in_progress');

/** Sends until an answer that is not retryable; `what` names the request in the failures' summary. */
async function retrying(what, send) {
  const giveUpAt = Date.now() + RETRY_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    const at = Date.now();
    let outcome;
    try {
      outcome = await send();
      attempts.push({ at, ms: Date.now() - at, status: outcome.status, what: `${what} ${outcome.status} ${outcome.body?.error?.code ?? ''}`.trim() });
      if (!isRetryable(outcome.status, outcome.body)) return outcome;
    } catch (error) {
      attempts.push({ at, ms: Date.now() - at, status: 'none', what: `${what} no answer (${error.cause?.code ?? error.code ?? error.name})` });
    }
    if (Date.now() > giveUpAt) {
      gaveUp++;
      return { status: 'gave up', body: outcome?.body };
    }
    await sleep(Math.min(2_000, 200 * 2 ** attempt));
  }
}

/** One API request; a POST carries an Idempotency-Key, the same on every retry. */
function call(method, path, body) {
  const headers = method === 'POST' ? { 'idempotency-key': randomUUID() } : {};
  return retrying(`${method} ${path.replace(/\/(cus|sub|in|pay|clock|ur|plan|we)_\w+/g, '/$1_…').replace(/\?.*/, '')}`, async () => {
    const { status, body: bytes } = await api.call(method, path, body, headers, REQUEST_TIMEOUT_MS);
    let parsed;
    try {
      parsed = JSON.parse(bytes.toString());
    } catch {
      parsed = undefined;
    }
    return { status, body: parsed };
  });
}

/**
 * The payer approves on the sandbox payer page (GET it for the CSRF token, POST the form):
 * acknowledged when the page answers 303. A page without the form is a payment already decided
 * (an approval whose answer was lost did go through): `decided`, not retried.
 */
function approve(redirectUrl) {
  // The page lives on the gateway; the payments service names it by its configured public URL.
  const page = new URL(new URL(redirectUrl).pathname, stack.url).toString();
  return retrying('sandbox payer page Approve', async () => {
    const shown = await fetch(page, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (shown.status !== 200) return { status: shown.status };
    const csrf = /name="csrf" value="([^"]+)"/.exec(await shown.text())?.[1];
    const cookie = shown.headers.get('set-cookie')?.split(';')[0];
    if (!csrf || !cookie) return { status: 'decided' };
    const approved = await fetch(page, {
      method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'approve', csrf }),
    });
    return { status: approved.status };
  });
}

// ---------------------------------------------------------------------------------------------
// The load: each worker runs the three flows in turn and records every acknowledged resource.

const created = (response) => response.status === 201 || response.status === 200;
let sequence = 0;

console.error('setting up: a metered plan in ZMW, a webhook endpoint for every event type at the receiver…');
const plan = await call('POST', '/v1/plans', { name: 'Fibre', pricing_model: 'flat_rate', amount_monthly: 25_000, currency: 'zmw' });
if (!created(plan)) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`);
const component = await call('POST', `/v1/plans/${plan.body.id}/price-components`, { name: 'Data', type: 'metered', metric_name: 'gigabytes', unit_amount: 10 });
if (!created(component)) throw new Error(`price component: ${component.status} ${JSON.stringify(component.body)}`);
const HOOK_PATH = '/hooks/faults';
const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}${HOOK_PATH}`, events: EVENT_TYPES });
if (!created(endpoint)) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);

/** A fresh record of what the API acknowledged (one per fault). */
const newAcknowledged = () => ({ customers: [], subscriptions: [], usage: [], invoices: [], payments: [], paid: [], renewals: [], requests: 0, formlessPending: 0 });

/** Creates a customer; answers its id, or undefined when the API did not acknowledge it. */
async function customer(acked, extra = {}) {
  const n = ++sequence;
  const response = await call('POST', '/v1/customers', { name: `Faults ${n}`, email: `faults-${n}-${randomUUID().slice(0, 8)}@example.com`, ...extra });
  acked.requests++;
  if (!created(response)) return undefined;
  acked.customers.push(response.body.id);
  return response.body.id;
}

async function subscription(acked, customerId) {
  const response = await call('POST', '/v1/subscriptions', { customer: customerId, plan: plan.body.id, billing_interval: 'monthly' });
  acked.requests++;
  if (!created(response)) return undefined;
  acked.subscriptions.push(response.body.id);
  return response.body.id;
}

const FLOWS = {
  /** A customer, a subscription to the metered plan, three usage records. */
  async metered(acked) {
    const customerId = await customer(acked);
    const subscriptionId = customerId && (await subscription(acked, customerId));
    if (!subscriptionId) return;
    for (let i = 0; i < 3; i++) {
      const response = await call('POST', '/v1/usage', { subscription: subscriptionId, metric_name: 'gigabytes', quantity: 1 + i, idempotency_key: randomUUID() });
      acked.requests++;
      if (created(response)) acked.usage.push({ id: response.body.id, subscription: subscriptionId });
    }
  },
  /** A customer, an open invoice, a payment initiated and approved by the payer: the invoice must end paid, once. */
  async paid(acked) {
    const customerId = await customer(acked);
    if (!customerId) return;
    const invoice = await call('POST', '/v1/invoices', { customer: customerId, amount: 12_345, currency: 'zmw', description: 'Fibre', status: 'open' });
    acked.requests++;
    if (!created(invoice)) return;
    acked.invoices.push(invoice.body.id);
    const payment = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.body.id, phone_number: '+260971000001', provider: 'MTN_MOMO_ZMB' });
    acked.requests++;
    if (!created(payment)) return;
    acked.payments.push(payment.body.id);
    const approved = await approve(payment.body.redirectUrl);
    acked.requests++;
    if (approved.status === 303) acked.paid.push({ invoice: invoice.body.id, payment: payment.body.id });
    // A page without its form must be a payment that is no longer pending (its approval went through unanswered).
    if (approved.status === 'decided' && (await call('GET', `/v1/payments/${payment.body.id}`)).body?.status === 'pending') acked.formlessPending++;
  },
  /** A test clock, a customer on it, a monthly subscription, the clock advanced 31 days and an hour: exactly one renewal. */
  async renewed(acked) {
    const frozen = Math.floor(Date.now() / 1000);
    const clock = await call('POST', '/v1/test-clocks', { frozen_time: frozen });
    acked.requests++;
    if (!created(clock)) return;
    const customerId = await customer(acked, { test_clock: clock.body.id });
    const subscriptionId = customerId && (await subscription(acked, customerId));
    if (!subscriptionId) return;
    const advanced = await call('POST', `/v1/test-clocks/${clock.body.id}/advance`, { frozen_time: frozen + 31 * 86_400 + 3_600 });
    acked.requests++;
    if (created(advanced)) acked.renewals.push(subscriptionId);
  },
};

/** Runs the load until `stop()`; answers what it acknowledged once every worker has finished its flow. */
function startLoad() {
  const acked = newAcknowledged();
  let running = true;
  const names = Object.keys(FLOWS);
  const done = Promise.all(Array.from({ length: WORKERS }, async (_, worker) => {
    for (let i = worker; running; i++) {
      try {
        await FLOWS[names[i % names.length]](acked);
      } catch (error) {
        console.error(`a flow failed outside the API: ${error.message}`);
      }
    }
  }));
  return { acked, async stop() { running = false; await done; return acked; } };
}

// ---------------------------------------------------------------------------------------------
// The checks, from the outside and from the databases

const databaseUrl = (app) => stack.urlFor(databaseName(app));
const query = (app, sql, params) => queryDatabase(databaseUrl(app), sql, params);

/** Every event the receiver got: envelope id, type, object id. */
async function deliveries() {
  return (await receiver.received(HOOK_PATH)).map((arrival) => {
    const envelope = JSON.parse(arrival.body);
    return { id: envelope.id, type: envelope.type, object: envelope.data?.object?.id, periodStart: envelope.data?.object?.current_period_start };
  });
}

/** Every public event the services wrote to their outboxes (the changes), by id. */
async function outboxEvents() {
  const subscribable = new Set(EVENT_TYPES);
  const rows = await Promise.all(SERVICES.map((service) => query(service, `SELECT id, type FROM outbox_events WHERE topic LIKE '%.public'`).catch(() => [])));
  return rows.flat().filter((row) => subscribable.has(row.type));
}

/** Polls `check` (answers a count of what is still missing) until it is 0 or SETTLE_MS pass; answers the last count. */
async function settled(check) {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const missing = await check();
    if (missing === 0 || Date.now() > deadline) return missing;
    await sleep(1_000);
  }
}

/** Answered 2xx, and then gone (or never done): each acknowledged resource read back through the API. */
async function lostAcknowledged(acked) {
  const gone = async (path) => (await call('GET', path)).status !== 200;
  let lost = 0;
  for (const id of acked.customers) if (await gone(`/v1/customers/${id}`)) lost++;
  for (const id of acked.subscriptions) if (await gone(`/v1/subscriptions/${id}`)) lost++;
  for (const id of acked.invoices) if (await gone(`/v1/invoices/${id}`)) lost++;
  for (const id of acked.payments) if (await gone(`/v1/payments/${id}`)) lost++;
  const bySubscription = new Map();
  for (const record of acked.usage) bySubscription.set(record.subscription, [...(bySubscription.get(record.subscription) ?? []), record]);
  for (const [subscriptionId, records] of bySubscription) {
    const listed = await call('GET', `/v1/usage?subscription=${subscriptionId}&limit=100`);
    const ids = new Set((listed.body?.data ?? []).map((record) => record.id));
    lost += records.filter((record) => !ids.has(record.id)).length;
  }
  // An approval the page acknowledged must end in a paid invoice; an advance, in its renewal.
  const unpaid = async () => {
    let count = 0;
    for (const { invoice } of acked.paid) if ((await call('GET', `/v1/invoices/${invoice}`)).body?.status !== 'paid') count++;
    return count;
  };
  const unrenewed = async () => {
    let count = 0;
    for (const id of acked.renewals) if (!((await call('GET', `/v1/subscriptions/${id}`)).body?.periods_billed >= 2)) count++;
    return count;
  };
  return lost + (await settled(unpaid)) + (await settled(unrenewed));
}

/** Events the changes should have made that never reached the event log or the receiver. */
async function lostEvents(acked, alreadyLost) {
  // Every public outbox row must be in the event log and at the receiver, by its id.
  const missingOf = async () => {
    const [outbox, logged, received] = await Promise.all([outboxEvents(), query('webhook-dispatch', 'SELECT id FROM events'), deliveries()]);
    const loggedIds = new Set(logged.map((row) => row.id));
    const receivedIds = new Set(received.map((event) => event.id));
    const missing = outbox.filter((row) => !loggedIds.has(row.id) || !receivedIds.has(row.id)).map((row) => row.id);
    // And every acknowledged change has its event at the receiver (an outbox row lost with its change would hide here otherwise).
    const has = new Set(received.map((event) => `${event.type} ${event.object}`));
    const expected = [
      ...acked.customers.map((id) => `customer.created ${id}`),
      ...acked.subscriptions.map((id) => `subscription.created ${id}`),
      ...acked.paid.map(({ invoice }) => `invoice.paid ${invoice}`),
      ...acked.renewals.map((id) => `subscription.activated ${id}`),
    ];
    return missing.filter((id) => !alreadyLost.has(id)).length + expected.filter((change) => !has.has(change)).length;
  };
  return settled(missingOf);
}

/** Ids of outbox events lost so far (so one fault's loss is not counted again on the next). */
async function lostEventIds() {
  const [outbox, logged, received] = await Promise.all([outboxEvents(), query('webhook-dispatch', 'SELECT id FROM events'), deliveries()]);
  const loggedIds = new Set(logged.map((row) => row.id));
  const receivedIds = new Set(received.map((event) => event.id));
  return new Set(outbox.filter((row) => !loggedIds.has(row.id) || !receivedIds.has(row.id)).map((row) => row.id));
}

/** Side effects done twice, over the whole run so far: invoices paid twice, periods renewed twice, two event ids for one change, a customer created twice. */
async function duplicates() {
  const [paidTwice, overpaid, renewedTwice, doubleEvents, doubleCustomers, received] = await Promise.all([
    query('payments', `SELECT invoice_id FROM payments WHERE status = 'succeeded' GROUP BY invoice_id HAVING count(*) > 1`),
    query('invoicing', 'SELECT id FROM invoices WHERE amount_paid > total'),
    query('subscription', `SELECT s.id FROM subscriptions s WHERE s.periods_billed > 2`),
    query('webhook-dispatch', `SELECT type, object_id FROM events WHERE type IN ('customer.created', 'subscription.created', 'invoice.created', 'invoice.paid') GROUP BY type, object_id HAVING count(*) > 1`),
    query('subscription', 'SELECT email FROM customers GROUP BY email HAVING count(*) > 1'),
    deliveries(),
  ]);
  // At the receiver: one event id per once-only change, one renewal event per period.
  const idsPer = new Map();
  for (const event of received) {
    const key = event.type === 'subscription.activated' ? `${event.type} ${event.object} ${event.periodStart}` : `${event.type} ${event.object}`;
    if (!['customer.created', 'subscription.created', 'invoice.created', 'invoice.paid', 'subscription.activated'].includes(event.type)) continue;
    idsPer.set(key, (idsPer.get(key) ?? new Set()).add(event.id));
  }
  const receivedTwice = [...idsPer.values()].filter((ids) => ids.size > 1).length;
  return {
    total: paidTwice.length + overpaid.length + renewedTwice.length + doubleEvents.length + doubleCustomers.length + receivedTwice,
    detail: { paidTwice: paidTwice.length, overpaid: overpaid.length, renewedTwice: renewedTwice.length, doubleEvents: doubleEvents.length, doubleCustomers: doubleCustomers.length, receivedTwice },
  };
}

// ---------------------------------------------------------------------------------------------
// The faults

const restart = async (...names) => {
  await Promise.all(names.map((name) => appNamed(name).restart()));
  for (const name of names) killedByFault.delete(name);
};
const kill = (...names) => Promise.all(names.map((name) => {
  killedByFault.add(name);
  return appNamed(name).kill('SIGKILL');
}));
/** A network fault through Toxiproxy: the toxics on for `seconds`, then off. */
const network = (proxy, toxics, seconds) => async () => {
  const remove = await toxiproxy.toxic(proxy, toxics);
  await sleep(seconds * 1000);
  await remove();
};
const both = (toxic) => ['upstream', 'downstream'].map((stream) => ({ ...toxic, stream }));
const gatewayHop = `gateway-to-${PROXIED_SERVICE}`;
const databaseHop = `${PROXIED_SERVICE}-to-postgresql`;

/** `[name, description, inject-and-recover]`: each resolves once the part is back (ready, or the toxics removed). */
const FAULTS = [
  ...['gateway', ...SERVICES].map((app) => [`kill-${app}`, `kill -9 ${app}, restarted`, async () => { await kill(app); await restart(app); }]),
  ['kill-subscription+invoicing', 'kill -9 subscription and invoicing at once, restarted', async () => { await kill('subscription', 'invoicing'); await restart('subscription', 'invoicing'); }],
  ['kill-gateway+webhook-dispatch', 'kill -9 gateway and webhook-dispatch at once, restarted', async () => { await kill('gateway', 'webhook-dispatch'); await restart('gateway', 'webhook-dispatch'); }],
  ['kafka-restart', 'Kafka broker stopped 10 s, started', async () => { await infrastructure.stopKafka(); await sleep(10_000); await infrastructure.startKafka(); }],
  ['postgres-kill', 'PostgreSQL kill -9 (every process), restarted after 3 s', async () => { infrastructure.killPostgres(); await sleep(3_000); await infrastructure.restartPostgres(); }],
  ['gateway-latency', `gateway→${PROXIED_SERVICE}: +1 s latency (±200 ms) for 10 s`, network(gatewayHop, [{ type: 'latency', stream: 'downstream', attributes: { latency: 1000, jitter: 200 } }], 10)],
  ['gateway-resets', `gateway→${PROXIED_SERVICE}: every connection reset for 5 s`, network(gatewayHop, both({ type: 'reset_peer', attributes: { timeout: 0 } }), 5)],
  ['gateway-partition', `gateway→${PROXIED_SERVICE}: partition (no byte passes) for 10 s`, network(gatewayHop, both({ type: 'timeout', attributes: { timeout: 0 } }), 10)],
  ['database-latency', `${PROXIED_SERVICE}→PostgreSQL: +200 ms latency for 10 s`, network(databaseHop, [{ type: 'latency', stream: 'downstream', attributes: { latency: 200, jitter: 20 } }], 10)],
  ['database-resets', `${PROXIED_SERVICE}→PostgreSQL: every connection reset for 5 s`, network(databaseHop, both({ type: 'reset_peer', attributes: { timeout: 0 } }), 5)],
  ['database-partition', `${PROXIED_SERVICE}→PostgreSQL: partition (no byte passes) for 10 s`, network(databaseHop, both({ type: 'timeout', attributes: { timeout: 0 } }), 10)],
];
/** The short form: one kill -9 of the edge and of a service, one broker restart, one PostgreSQL kill. */
const SHORT_FAULTS = ['kill-gateway', 'kill-invoicing', 'kafka-restart', 'postgres-kill'];
const chosen = args.only ? args.only.split(',') : SHORT ? SHORT_FAULTS : FAULTS.map(([name]) => name);
const unknown = chosen.filter((name) => !FAULTS.some(([fault]) => fault === name));
if (unknown.length > 0) throw new Error(`unknown fault(s) ${unknown.join(', ')}; known: ${FAULTS.map(([name]) => name).join(', ')}`);

const rows = [];
let knownLostEvents = new Set();
let duplicatesBefore = 0;
const started = Date.now();
for (const [name, description, inject] of FAULTS.filter(([fault]) => chosen.includes(fault))) {
  console.error(`\n${name}: ${description}`);
  const load = startLoad();
  await sleep(LEAD_S * 1000);
  const faultAt = Date.now();
  await inject();
  const recoveredAt = Date.now();
  await sleep(TRAIL_S * 1000);
  const acked = await load.stop();
  const during = attempts.filter((attempt) => attempt.at >= faultAt);
  const failed = during.filter((attempt) => attempt.status === 'none' || attempt.status >= 500);
  const failures = {};
  for (const attempt of failed) failures[attempt.what] = (failures[attempt.what] ?? 0) + 1;
  const lastFailure = failed.length > 0 ? Math.max(...failed.map((attempt) => attempt.at)) : undefined;
  const lost = await lostAcknowledged(acked);
  const eventsLost = await lostEvents(acked, knownLostEvents);
  knownLostEvents = await lostEventIds();
  const doubled = await duplicates();
  const row = {
    fault: name,
    description,
    requests: acked.requests,
    acknowledged: acked.customers.length + acked.subscriptions.length + acked.usage.length + acked.invoices.length + acked.payments.length,
    lost,
    eventsLost,
    duplicated: doubled.total - duplicatesBefore,
    duplicatedDetail: doubled.detail,
    fiveHundreds: during.filter((attempt) => attempt.status >= 500).length,
    // A fault of the infrastructure is a 503 (retry); a 500 is a bug's answer and must be 0.
    internalErrors: during.filter((attempt) => attempt.status === 500).length,
    unanswered: during.filter((attempt) => attempt.status === 'none').length,
    gaveUp,
    slowestSeconds: Math.max(0, ...during.map((attempt) => attempt.ms)) / 1000,
    recoverySeconds: lastFailure === undefined ? 0 : Math.max(0, (lastFailure - faultAt) / 1000),
    faultSeconds: (recoveredAt - faultAt) / 1000,
    failures,
    crashed: crashes.map((crash) => crash.app),
    formlessPending: acked.formlessPending,
  };
  crashes = [];
  duplicatesBefore = doubled.total;
  rows.push(row);
  console.error(JSON.stringify(row));
  // Row by row, so a run stopped midway still tells what its faults did.
  if (args.json) writeFileSync(args.json, JSON.stringify(rows, null, 2));
  attempts.length = 0;
  gaveUp = 0;
}

const mustBeZero = (row) => row.lost + row.eventsLost + row.duplicated + row.crashed.length + row.internalErrors;
console.log(`\nRecur fault suite (${SHORT ? 'short form' : 'full'}): every app its own process, one durable PostgreSQL, a Kafka broker of its own; ${WORKERS} load workers; ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log('| fault | requests | 2xx then lost | events lost | duplicated side effects | apps crashed | 5xx answered | of them 500 | unanswered (retried) | slowest answer (s) | fault lasted (s) | errors until (s after fault) |');
console.log('|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) {
  console.log(`| ${row.description} | ${row.requests} | ${row.lost} | ${row.eventsLost} | ${row.duplicated} | ${row.crashed.join(', ') || 0} | ${row.fiveHundreds} | ${row.internalErrors} | ${row.unanswered} | ${row.slowestSeconds.toFixed(1)} | ${row.faultSeconds.toFixed(1)} | ${row.recoverySeconds.toFixed(1)} |`);
}
printWarnings(stack.apps);
shuttingDown = true;
api.close();
await receiver.stop();
await stack.stop();
const failedRows = rows.filter((row) => mustBeZero(row) > 0);
if (failedRows.length > 0) {
  console.error(`\nFAILED: ${failedRows.map((row) => `${row.fault} (lost ${row.lost}, events lost ${row.eventsLost}, duplicated ${row.duplicated} ${JSON.stringify(row.duplicatedDetail)}, crashed: ${row.crashed.join(', ') || 'none'})`).join('; ')}`);
  process.exitCode = 1;
}
process.exit();
