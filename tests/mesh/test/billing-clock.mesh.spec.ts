import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AppProcess, queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { api, eventually, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * The billing clock's promises, through the gateway only, as an integrator sees them: a
 * customer on a test clock subscribes to a monthly plan with a 14-day trial, and advancing the
 * clock 3½ months ends the trial and renews three times — one invoice per period
 * (GET /v1/invoices?subscription=…), and subscription.activated and invoice.created once each
 * at a real webhook receiver — when two advances are sent at once, when the subscription
 * service is killed with SIGKILL mid-advance, when two replicas run the clock, and when the
 * clock was down while the time passed.
 */
let mesh: Mesh;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

const DAY = 86_400;
/** 2030-01-01 12:00 UTC: trial to Jan 15, then periods from the 15th (Feb 15, Mar 15, Apr 15 renewals). */
const START = Date.UTC(2030, 0, 1, 12) / 1000;
/** 3½ months on: Apr 16, 00:00 UTC. */
const THREE_AND_A_HALF_MONTHS = Date.UTC(2030, 3, 16) / 1000;
/** The periods a subscription sold at START with a 14-day trial has begun by then: the first, and three renewals. */
const PERIOD_STARTS = [Date.UTC(2030, 0, 15, 12), Date.UTC(2030, 1, 15, 12), Date.UTC(2030, 2, 15, 12), Date.UTC(2030, 3, 15, 12)].map((ms) => ms / 1000);
const EVENTS = ['subscription.created', 'subscription.activated', 'invoice.created'];

interface Sandbox {
  call: ReturnType<typeof api>;
  hookPath: string;
  plan: string;
  clock: string;
}

/** A new app with a webhook endpoint for the clock's events, a monthly plan and a test clock at START. */
async function sandbox(name: string): Promise<Sandbox> {
  const { keys } = await mesh.createAccount(name);
  const call = api(mesh, keys.test);
  const hookPath = `/hooks/${name}`;
  const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}${hookPath}`, events: EVENTS });
  expect(endpoint.status).toBe(201);
  const plan = await call('POST', '/v1/plans', { name: 'Team', pricing_model: 'flat_rate', amount_monthly: 1_000 });
  expect(plan.status).toBe(201);
  const clock = await call('POST', '/v1/test-clocks', { name, frozen_time: START });
  expect(clock.body).toMatchObject({ object: 'test_clock', status: 'ready', frozen_time: START });
  return { call, hookPath, plan: plan.body.id, clock: clock.body.id };
}

/** A customer on the sandbox's clock with a monthly subscription in a 14-day trial. */
async function subscribe({ call, plan, clock }: Sandbox, n: number): Promise<string> {
  const customer = await call('POST', '/v1/customers', { name: `Customer ${n}`, email: `c${n}@example.com`, test_clock: clock });
  expect(customer.status).toBe(201);
  const subscription = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan, billing_interval: 'monthly', trial_days: 14 });
  expect(subscription.body).toMatchObject({ status: 'trialing', trial_end: START + 14 * DAY, test_clock: clock });
  return subscription.body.id;
}

async function clockStatus({ call, clock }: Sandbox): Promise<{ status: string; frozen_time: number }> {
  const { status, body } = await call('GET', `/v1/test-clocks/${clock}`);
  expect(status).toBe(200);
  return body;
}

async function untilReady(box: Sandbox, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => (await clockStatus(box)).status === 'ready', timeoutMs, 'the test clock to be ready');
}

interface Envelope {
  id: string;
  type: string;
  created: number;
  data: { object: { id: string; subscription?: string; number?: string; period?: { start: number }; current_period_start?: number } };
}

/** Every event delivered to the sandbox's endpoint, one per event id (delivery is at least once, by the same id). */
async function delivered(box: Sandbox): Promise<Envelope[]> {
  const byId = new Map<string, Envelope>();
  for (const arrival of await receiver.received(box.hookPath)) {
    const envelope = JSON.parse(arrival.body) as Envelope;
    byId.set(envelope.id, envelope);
  }
  return [...byId.values()];
}

const subscriptionOf = (event: Envelope) => (event.type === 'invoice.created' ? event.data.object.subscription : event.data.object.id);

/**
 * The promise for each subscription: active in its fourth period; exactly four invoices (the
 * first period's, then three renewals), one per period, numbered in period order; and, at the
 * receiver, one subscription.created, one subscription.activated per period (made at the
 * period's start in the clock's time, so in order) and one invoice.created per invoice —
 * after a settle, so a late duplicate would be seen.
 */
async function expectBilledOncePerPeriod(box: Sandbox, subscriptions: string[]): Promise<void> {
  const expectedEvents = subscriptions.length * (1 + 2 * PERIOD_STARTS.length);
  await eventually(async () => (await delivered(box)).length >= expectedEvents, 90_000, `${expectedEvents} events at the receiver`);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const events = await delivered(box);
  expect(events).toHaveLength(expectedEvents);
  for (const id of subscriptions) {
    const subscription = await box.call('GET', `/v1/subscriptions/${id}`);
    expect(subscription.body).toMatchObject({ status: 'active', current_period_start: PERIOD_STARTS[3], periods_billed: 4 });

    const invoices = await box.call('GET', `/v1/invoices?subscription=${id}&limit=100`);
    expect(invoices.status).toBe(200);
    const byPeriod = [...invoices.body.data].sort((a, b) => a.period.start - b.period.start);
    expect(byPeriod.map((invoice) => [invoice.period.start, invoice.billing_reason, invoice.total])).toEqual(
      PERIOD_STARTS.map((start, i) => [start, i === 0 ? expect.any(String) : 'subscription_cycle', 1_000]),
    );
    // Invoices are numbered when raised, without gaps: period order is raising order.
    const numbers = byPeriod.map((invoice) => invoice.number as string);
    expect(numbers).toEqual([...numbers].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })));

    const mine = events.filter((event) => subscriptionOf(event) === id);
    expect(mine.filter((event) => event.type === 'subscription.created')).toHaveLength(1);
    const activated = mine.filter((event) => event.type === 'subscription.activated').sort((a, b) => a.created - b.created);
    expect(activated.map((event) => [event.created, event.data.object.current_period_start])).toEqual(PERIOD_STARTS.map((start) => [start, start]));
    const invoiceEvents = mine.filter((event) => event.type === 'invoice.created').map((event) => event.data.object.id).sort();
    expect(invoiceEvents).toEqual(byPeriod.map((invoice) => invoice.id).sort());
  }
}

/** The clock's steps of the sandbox's subscriptions, by state: how far an advance has got. */
async function stepCounts(subscriptions: string[]): Promise<{ done: number; pending: number }> {
  const rows = await queryDatabase<{ status: string; count: string }>(
    mesh.databaseUrls.subscription,
    "SELECT status, count(*) FROM billing_jobs WHERE subscription_id = ANY($1::text[]) AND due_at IS NOT NULL AND status IN ('done', 'pending') GROUP BY status",
    [subscriptions],
  );
  const count = (status: string) => Number(rows.find((row) => row.status === status)?.count ?? 0);
  return { done: count('done'), pending: count('pending') };
}

/** Invoice steps still pending although invoicing raised their invoice: the dead process never marked them done. */
async function invoiceStepsAnsweredNotDone(subscriptions: string[]): Promise<number> {
  const pending = await queryDatabase<{ subscription_id: string; run_at: Date }>(
    mesh.databaseUrls.subscription,
    "SELECT subscription_id, run_at FROM billing_jobs WHERE subscription_id = ANY($1::text[]) AND kind = 'invoice' AND status = 'pending' AND due_at IS NOT NULL",
    [subscriptions],
  );
  const raised = await queryDatabase<{ subscription_id: string; period_start: Date }>(
    mesh.databaseUrls.invoicing,
    'SELECT subscription_id, period_start FROM invoices WHERE subscription_id = ANY($1::text[])',
    [subscriptions],
  );
  const raisedKeys = new Set(raised.map((row) => `${row.subscription_id}:${row.period_start.getTime()}`));
  return pending.filter((row) => raisedKeys.has(`${row.subscription_id}:${row.run_at.getTime()}`)).length;
}

/** Each subscription's clock steps in the order they ran: each step's time must not go back. */
async function expectStepsRanInOrder(subscriptions: string[]): Promise<void> {
  const rows = await queryDatabase<{ subscription_id: string; step_key: string; run_at: Date }>(
    mesh.databaseUrls.subscription,
    "SELECT subscription_id, step_key, run_at FROM billing_jobs WHERE subscription_id = ANY($1::text[]) AND status = 'done' ORDER BY updated_at, id",
    [subscriptions],
  );
  for (const id of subscriptions) {
    const ran = rows.filter((row) => row.subscription_id === id && row.step_key.startsWith('invoice:')).map((row) => row.run_at.getTime() / 1000);
    expect(ran).toEqual(PERIOD_STARTS);
  }
}

it('ends the trial and renews three times over 3½ months, once each, with two advances sent at once', async () => {
  const box = await sandbox('concurrent-advances');
  const subscription = await subscribe(box, 1);
  // Two advances at once: the clock's row lock serialises them; the one that comes second
  // and would move the clock back is refused, and every move runs once whichever wins.
  const answers = await Promise.all([
    box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: THREE_AND_A_HALF_MONTHS }),
    box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: Date.UTC(2030, 2, 1) / 1000 }),
  ]);
  expect(answers[0].status).toBe(200);
  expect([200, 400]).toContain(answers[1].status);
  if (answers[1].status === 400) expect(answers[1].body.error).toMatchObject({ param: 'frozen_time' });
  await untilReady(box);
  expect(await clockStatus(box)).toMatchObject({ status: 'ready', frozen_time: THREE_AND_A_HALF_MONTHS });
  await expectBilledOncePerPeriod(box, [subscription]);
  // The same advance again is refused (the clock is there already) and bills nothing more.
  expect((await box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: THREE_AND_A_HALF_MONTHS })).status).toBe(400);
  await expectBilledOncePerPeriod(box, [subscription]);
}, 180_000);

it('finishes an advance after the subscription service is killed with SIGKILL mid-way, billing nothing twice', async () => {
  const box = await sandbox('kill-mid-advance');
  const subscriptions: string[] = [];
  for (let n = 0; n < 25; n++) subscriptions.push(await subscribe(box, n));
  // The process kills itself (SIGKILL) once invoicing has answered its 10th invoice request and
  // before that step is marked done; the other steps in flight die wherever they are.
  await mesh.apps.subscription.kill('SIGTERM');
  await mesh.apps.subscription.restart({ RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE: '10' });
  const advanced = await box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: THREE_AND_A_HALF_MONTHS });
  expect(advanced.body).toMatchObject({ status: 'advancing', frozen_time: THREE_AND_A_HALF_MONTHS });
  expect(await mesh.apps.subscription.exited()).toBeNull();
  const atKill = await stepCounts(subscriptions);
  // 25 × 8 steps: the kill came mid-way.
  expect(atKill.done).toBeGreaterThanOrEqual(10);
  expect(atKill.pending).toBeGreaterThan(0);
  expect(await invoiceStepsAnsweredNotDone(subscriptions)).toBeGreaterThanOrEqual(1);
  await mesh.apps.subscription.restart({ RECUR_FAULT_CLOCK_KILL_AFTER_INVOICE: '0' });
  // The dead process's leases lapse (30 s), then the restarted one finishes the advance.
  expect((await clockStatus(box)).status).toBe('advancing');
  await untilReady(box, 120_000);
  await expectBilledOncePerPeriod(box, subscriptions);
  await expectStepsRanInOrder(subscriptions);
  console.log(`kill -9 mid-advance: ${atKill.done} steps done and ${atKill.pending} due at the kill`);
}, 300_000);

/** How many calls to invoicing a process's trace file shows (its client spans to CreateSubscriptionInvoices). */
function invoiceRequestsIn(traceFile: string): number {
  return readFileSync(traceFile, 'utf8').split('\n').filter((line) => line.includes('InvoicingService/CreateSubscriptionInvoices"') && line.includes('"service":"subscription"')).length;
}

it('bills each period once with two subscription-service replicas running the clock', async () => {
  // Batches of two: the replicas race for many small batches rather than a few large ones.
  const smallBatches = { BILLING_CLOCK_BATCH_SIZE: '2' };
  await mesh.apps.subscription.kill('SIGTERM');
  await mesh.apps.subscription.restart(smallBatches);
  const replica: AppProcess = await mesh.startReplica('subscription', smallBatches);
  try {
    const box = await sandbox('replicas');
    const subscriptions: string[] = [];
    for (let n = 0; n < 25; n++) subscriptions.push(await subscribe(box, n));
    const before = { first: invoiceRequestsIn(join(mesh.traceDir, 'subscription.jsonl')), second: invoiceRequestsIn(join(mesh.traceDir, 'subscription-replica-1.jsonl')) };
    await box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: THREE_AND_A_HALF_MONTHS });
    await untilReady(box);
    await expectBilledOncePerPeriod(box, subscriptions);
    await expectStepsRanInOrder(subscriptions);
    // Both replicas did part of the work (else this would test one worker).
    const requests = {
      first: invoiceRequestsIn(join(mesh.traceDir, 'subscription.jsonl')) - before.first,
      second: invoiceRequestsIn(join(mesh.traceDir, 'subscription-replica-1.jsonl')) - before.second,
    };
    expect(requests.first).toBeGreaterThan(0);
    expect(requests.second).toBeGreaterThan(0);
    console.log(`replicas: calls to invoicing ${requests.first} + ${requests.second} for ${subscriptions.length * PERIOD_STARTS.length} invoices`);
  } finally {
    await replica.kill('SIGTERM');
    await mesh.apps.subscription.kill('SIGTERM');
    await mesh.apps.subscription.restart({ BILLING_CLOCK_BATCH_SIZE: '' });
  }
}, 240_000);

it('catches up after the clock was down: each missed period billed once, in order', async () => {
  const box = await sandbox('downtime');
  const subscriptions = [await subscribe(box, 1), await subscribe(box, 2)];
  // The service keeps answering but runs no clock worker (BILLING_CLOCK_CONCURRENCY=0): the
  // clock is down while its time passes.
  await mesh.apps.subscription.kill('SIGTERM');
  await mesh.apps.subscription.restart({ BILLING_CLOCK_CONCURRENCY: '0' });
  try {
    const advanced = await box.call('POST', `/v1/test-clocks/${box.clock}/advance`, { frozen_time: THREE_AND_A_HALF_MONTHS });
    expect(advanced.body).toMatchObject({ status: 'advancing' });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await stepCounts(subscriptions)).toEqual({ done: 0, pending: 2 });
    expect((await clockStatus(box)).status).toBe('advancing');
    expect((await box.call('GET', `/v1/invoices?subscription=${subscriptions[0]}`)).body.data).toEqual([]);
  } finally {
    await mesh.apps.subscription.kill('SIGTERM');
    await mesh.apps.subscription.restart({ BILLING_CLOCK_CONCURRENCY: '8' });
  }
  await untilReady(box);
  await expectBilledOncePerPeriod(box, subscriptions);
  await expectStepsRanInOrder(subscriptions);
}, 240_000);
