#!/usr/bin/env node
// Renewal throughput of the billing clock, end to end: N subscriptions whose periods all ended
// at the same moment, renewed by the subscription service's clock — period advanced and
// subscription.activated written, invoice raised in the invoicing service (its own process, over
// gRPC) and invoice.created written, every event published to Kafka by the services' relays.
//
//   npm run bench:renewals                       # 100 000 subscriptions over 100 apps
//   npm run bench:renewals -- --count 10000      # fewer
//   npm run bench:renewals -- --count 10000 --profile /tmp/prof   # CPU profiles of every service
//
// Options: --count N (100000), --accounts A (100: the subscriptions are spread over A apps; an
// app's invoice numbers are gapless, so its invoices are numbered one at a time),
// --concurrency C (the clock's BILLING_CLOCK_CONCURRENCY; the service's default otherwise),
// --batch-size B (the clock's BILLING_CLOCK_BATCH_SIZE; the service's default otherwise),
// --profile DIR (`--cpu-prof` of every service; the run's window summarised at the end by profile-summary.mjs).
// KAFKA_BROKERS: an existing broker; otherwise one is started.
//
// Seeding is not measured: one subscription per app is sold through gRPC (a real price snapshot,
// customer and plan) and cloned in SQL (INSERT … SELECT over generate_series) into N, each with
// its own customer and its renewal step due now; the service runs without its clock worker
// (BILLING_CLOCK_CONCURRENCY=0) meanwhile. The clock then starts and the run ends when every
// renewal and invoice step is done, invoicing holds N invoices and both outboxes are published.
// The raw figure: the same cluster's rate for the SQL of a renewal's own transaction alone
// (the subscription row, its outbox event, the next steps), as a ceiling for comparison.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../bootstrap.mjs';
import { benchDir, cpuMs, monotonicMicros, printWarnings, profileArgs, startInfrastructure, summariseProfiles } from './harness.mjs';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    accounts: { type: 'string', default: '100' },
    concurrency: { type: 'string' },
    'batch-size': { type: 'string' },
    profile: { type: 'string' },
  },
});
const COUNT = Number(args.count);
const ACCOUNTS = Math.min(Number(args.accounts), COUNT);
const PROFILE_DIR = args.profile ? resolve(args.profile) : undefined;

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { Pool } = require('pg');
const { freePort, NO_INVOICE_MAIL, startApp } = require('@recur/testing');
const { catalogV1, createServiceClient, subscriptionV1 } = require('@recur/contracts');
const { addMonths } = require(join(ROOT, 'apps/subscription/dist/subscriptions/billing-period.js'));

const log = (message) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);

// ---------------------------------------------------------------------------------------------
// The stack: catalog, subscription and invoicing, each its own process and database.

const infrastructure = await startInfrastructure(benchDir('renewals'));
const { postgres } = infrastructure;
const common = {
  KAFKA_BROKERS: infrastructure.brokers,
  KAFKA_TOPIC_PREFIX: `bench-${randomBytes(3).toString('hex')}`,
  METRICS_PORT: '0',
  GRPC_HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
};
// usage-metering: a renewal batch asks it for the period's metered usage (none here).
const SERVICES = ['catalog', 'subscription', 'invoicing', 'usage-metering'];
const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, await freePort()])));
const peers = Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase().replace('-', '_')}_GRPC_ADDR`, `127.0.0.1:${ports[service]}`]));
// The clock waits until seeding is done; invoices are not e-mailed (the bench measures renewals).
// No payments service: renewals here are sent, never charged, so nothing asks it (smart retries).
const serviceEnv = { subscription: { BILLING_CLOCK_CONCURRENCY: '0', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' }, invoicing: NO_INVOICE_MAIL };
const urls = {};
const apps = {};
for (const service of SERVICES) {
  const database = `bench_${service.replace('-', '_')}`;
  await postgres.ensureDatabase(database);
  urls[service] = postgres.urlFor(database);
  apps[service] = await startApp(service, {
    env: { ...common, ...peers, DATABASE_URL: urls[service], GRPC_PORT: String(ports[service]), ...serviceEnv[service] },
    ready: { grpcPort: ports[service] },
    nodeArgs: profileArgs(PROFILE_DIR, service),
  });
}
const pools = Object.fromEntries(SERVICES.map((service) => [service, new Pool({ connectionString: urls[service], max: 4 })]));
const sql = (service, text, values) => pools[service].query(text, values);

// ---------------------------------------------------------------------------------------------
// Seeding: one sale per app through gRPC, cloned in SQL.

const catalog = createServiceClient(catalogV1.CatalogService, peers.CATALOG_GRPC_ADDR);
const subscription = createServiceClient(subscriptionV1.SubscriptionService, peers.SUBSCRIPTION_GRPC_ADDR);
// Periods anchored an hour over a month ago, on a day every month has: the first period has ended.
const now = new Date();
const anchor = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, Math.min(now.getUTCDate(), 28), now.getUTCHours() - 1, now.getUTCMinutes()));
const periodEnd = addMonths(anchor, 1);
if (periodEnd > now) throw new Error('the seeded period must have ended');

const seedStarted = performance.now();
const templates = [];
for (let a = 0; a < ACCOUNTS; a++) {
  const tenant = { accountId: `acct_bench${a}`, livemode: false };
  const { plan } = await catalog.createPlan({ tenant, name: 'Team', pricingModel: 'flat_rate', amountMonthly: 1_000n, billingIntervals: [] }, { timeoutMs: 30_000 });
  const { customer } = await subscription.createCustomer({ tenant, name: 'Bench', email: 'bench@example.com' }, { timeoutMs: 30_000 });
  const { subscription: sold } = await subscription.createSubscription({ tenant, customerId: customer.id, planId: plan.id, billingInterval: 'monthly', quantity: 1 }, { timeoutMs: 30_000 });
  templates.push(sold.id);
}
catalog.close();
subscription.close();

/** `INSERT INTO table SELECT <every column, some replaced> FROM table, generate_series(1, n) i WHERE <template>`. */
async function cloneRows(table, where, n, replaced) {
  const { rows } = await sql('subscription', 'SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table]);
  const columns = rows.map((row) => row.column_name);
  const select = columns.map((column) => replaced[column] ?? `t.${column}`).join(', ');
  await sql('subscription', `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${select} FROM ${table} t, generate_series(1, ${n}) i WHERE ${where}`);
}

// The templates' first period ended an hour ago; only their renewal remains on the clock.
await sql('subscription', "UPDATE billing_jobs SET status = 'done' WHERE kind = 'invoice'");
await sql('subscription', "DELETE FROM billing_jobs WHERE kind = 'renew'");
await sql('subscription', 'UPDATE subscriptions SET cycle_anchor = $1, current_period_start = $1, current_period_end = $2, created_at = $1', [anchor, periodEnd]);
const perAccount = Math.floor(COUNT / ACCOUNTS);
for (let a = 0; a < ACCOUNTS; a++) {
  const n = a < ACCOUNTS - 1 ? perAccount : COUNT - perAccount * (ACCOUNTS - 1);
  const id = `'${templates[a]}'`;
  const [{ customer_id: customerId }] = (await sql('subscription', 'SELECT customer_id FROM subscriptions WHERE id = $1', [templates[a]])).rows;
  await cloneRows('customers', `t.id = '${customerId}'`, n, { id: `'cus_b${a}_' || i`, email: `'bench' || i || '@example.com'` });
  await cloneRows('subscriptions', `t.id = ${id}`, n, { id: `'sub_b${a}_' || i`, customer_id: `'cus_b${a}_' || i` });
}
await sql('subscription', `DELETE FROM subscriptions WHERE id = ANY($1)`, [templates]);
const periodEndSeconds = Math.floor(periodEnd.getTime() / 1000);
await sql('subscription', `
  INSERT INTO billing_jobs (id, account_id, livemode, subscription_id, kind, step_key, status, run_at, due_at, payload, created_at, updated_at)
  SELECT 'bjob_' || s.id, s.account_id, s.livemode, s.id, 'renew', 'renew:' || s.id || ':${periodEndSeconds}', 'pending', $1, $1, '{}', now(), now()
  FROM subscriptions s`, [periodEnd]);
await sql('subscription', 'ANALYZE');
const seeded = Number((await sql('subscription', "SELECT count(*) FROM billing_jobs WHERE kind = 'renew' AND status = 'pending'")).rows[0].count);
if (seeded !== COUNT) throw new Error(`seeded ${seeded} renewals, expected ${COUNT}`);
const invoicesBefore = Number((await sql('invoicing', 'SELECT count(*) FROM invoices')).rows[0].count);
log(`seeded ${COUNT} subscriptions due at ${periodEnd.toISOString()} over ${ACCOUNTS} apps in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

// ---------------------------------------------------------------------------------------------
// The run: the clock starts; done when every step, invoice and event is through.

async function progress() {
  const [steps, invoices, subscriptionOutbox, invoicingOutbox] = await Promise.all([
    sql('subscription', "SELECT kind, count(*) FILTER (WHERE status = 'done') AS done, count(*) FILTER (WHERE status = 'pending' AND due_at <= now()) AS due FROM billing_jobs GROUP BY kind"),
    sql('invoicing', 'SELECT count(*) FROM invoices'),
    sql('subscription', 'SELECT count(*) FROM outbox_events WHERE published_at IS NULL'),
    sql('invoicing', 'SELECT count(*) FROM outbox_events WHERE published_at IS NULL'),
  ]);
  const kind = (name) => steps.rows.find((row) => row.kind === name) ?? { done: 0, due: 0 };
  return {
    renewed: Number(kind('renew').done),
    invoiceStepsDone: Number(kind('invoice').done) - ACCOUNTS,
    invoiceStepsDue: Number(kind('invoice').due),
    invoices: Number(invoices.rows[0].count) - invoicesBefore,
    unpublished: Number(subscriptionOutbox.rows[0].count) + Number(invoicingOutbox.rows[0].count),
  };
}

await apps.subscription.kill('SIGTERM');
const bootStarted = performance.now();
await apps.subscription.restart({ BILLING_CLOCK_CONCURRENCY: args.concurrency ?? '', BILLING_CLOCK_BATCH_SIZE: args['batch-size'] ?? '' });
const started = performance.now();
const runWindow = [monotonicMicros()];
const cpuNow = () => Object.fromEntries(SERVICES.map((service) => [service, cpuMs(apps[service].pid)]));
const cpuAtStart = cpuNow();
log(`clock started (subscription service boot ${((started - bootStarted) / 1000).toFixed(1)} s)`);
let state;
let firstRenewalsAt;
let invoicesRaisedAt;
let lastReport = started;
let cpuAtLastReport = cpuAtStart;
for (;;) {
  state = await progress();
  const elapsed = (performance.now() - started) / 1000;
  if (state.renewed === COUNT && firstRenewalsAt === undefined) firstRenewalsAt = elapsed;
  if (state.invoices === COUNT && invoicesRaisedAt === undefined) invoicesRaisedAt = elapsed;
  if (state.renewed === COUNT && state.invoiceStepsDone === COUNT && state.invoices === COUNT && state.unpublished === 0) break;
  if (performance.now() - lastReport >= 10_000) {
    // Each process's share of one core since the last line: which one is the bottleneck, and when.
    const cpuNowByService = cpuNow();
    const busy = SERVICES.map((service) => `${service} ${Math.round((cpuNowByService[service] - cpuAtLastReport[service]) / (performance.now() - lastReport) * 100)} %`).join(', ');
    lastReport = performance.now();
    cpuAtLastReport = cpuNowByService;
    const [failing] = (await sql('subscription', "SELECT last_error FROM billing_jobs WHERE status = 'pending' AND last_error IS NOT NULL LIMIT 1")).rows;
    log(`${elapsed.toFixed(0)} s: renewed ${state.renewed}, invoices ${state.invoices} (${state.invoiceStepsDue} requests due), events unpublished ${state.unpublished}; CPU ${busy}${failing ? `; a request failing: ${failing.last_error}` : ''}`);
  }
  if (elapsed > 3_600) throw new Error(`not done after an hour: ${JSON.stringify(state)}`);
  await new Promise((r) => setTimeout(r, 250));
}
const seconds = (performance.now() - started) / 1000;
runWindow.push(monotonicMicros());
const cpuAtEnd = cpuNow();
const cpu = Object.fromEntries(SERVICES.map((service) => [service, cpuAtEnd[service] - cpuAtStart[service]]));

// ---------------------------------------------------------------------------------------------
// Raw: a renewal's own transaction in plain SQL on the same cluster, 8 connections at once.

async function rawRenewals(n) {
  const rawDb = `bench_raw_${randomBytes(3).toString('hex')}`;
  await postgres.ensureDatabase(rawDb);
  const { applyMigrations } = require('@recur/persistence');
  await applyMigrations({ databaseUrl: postgres.urlFor(rawDb), migrationsDir: join(ROOT, 'apps', 'subscription', 'prisma', 'migrations'), libraries: [require('@recur/messaging').MESSAGING_MIGRATIONS, require('@recur/persistence').PERSISTENCE_MIGRATIONS] });
  const pool = new Pool({ connectionString: postgres.urlFor(rawDb), max: 8 });
  const [template] = (await sql('subscription', 'SELECT * FROM subscriptions LIMIT 1')).rows;
  const [event] = (await sql('subscription', "SELECT topic, key, type, payload, headers FROM outbox_events WHERE topic LIKE '%.public' LIMIT 1")).rows;
  const values = Array.from({ length: n }, (_, i) => `('raw_${i}', '${template.account_id}', false, '${template.customer_id}', '${template.plan_id}', 'active', 'monthly', 1, $1::jsonb, now(), 0, now(), now(), now(), now())`);
  for (let i = 0; i < values.length; i += 5_000) {
    await pool.query(`INSERT INTO subscriptions (id, account_id, livemode, customer_id, plan_id, status, billing_interval, quantity, price_snapshot, cycle_anchor, cycle_index, current_period_start, current_period_end, created_at, updated_at) VALUES ${values.slice(i, i + 5_000).join(',')}`, [JSON.stringify(template.price_snapshot)]);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 8 }, async () => {
    const client = await pool.connect();
    for (let i = next++; i < n; i = next++) {
      const id = `raw_${i}`;
      await client.query('BEGIN');
      await client.query('SELECT * FROM subscriptions WHERE id = $1 FOR UPDATE', [id]);
      await client.query("UPDATE subscriptions SET cycle_index = cycle_index + 1, current_period_start = current_period_end, current_period_end = current_period_end + interval '1 month', periods_billed = periods_billed + 1, updated_at = now() WHERE id = $1", [id]);
      await client.query('INSERT INTO outbox_events (id, topic, key, type, payload, headers) VALUES ($1, $2, $3, $4, $5, $6)', [`evt_${id}`, event.topic, id, event.type, event.payload, event.headers]);
      await client.query("INSERT INTO billing_jobs (id, account_id, livemode, subscription_id, kind, step_key, status, run_at, due_at, payload, created_at, updated_at) VALUES ($1, 'a', false, $2, 'invoice', $1, 'pending', now(), now(), '{}', now(), now()), ($3, 'a', false, $2, 'renew', $3, 'pending', now(), now(), '{}', now(), now())", [`invoice:${id}`, id, `renew:${id}`]);
      await client.query('COMMIT');
    }
    client.release();
  }));
  const rate = n / ((performance.now() - t0) / 1000);
  await pool.end();
  return rate;
}
const rawCount = Math.min(COUNT, 20_000);
const rawRate = await rawRenewals(rawCount).catch((error) => {
  log(`raw figure unavailable: ${error.message}`);
  return undefined;
});

console.log(`\nRecur renewal benchmark: ${COUNT} subscriptions over ${ACCOUNTS} apps, due at one moment; ${SERVICES.join(', ')} each its own process, events through Kafka`);
console.log(`  billing clock: BILLING_CLOCK_BATCH_SIZE ${args['batch-size'] ?? 'default'}, BILLING_CLOCK_CONCURRENCY ${args.concurrency ?? 'default'}`);
console.log(`renewed end to end in ${seconds.toFixed(1)} s: ${(COUNT / seconds).toFixed(0)} renewals/s (periods advanced after ${firstRenewalsAt?.toFixed(1)} s)`);
console.log(`  ${state.invoices} invoices raised in invoicing (the last after ${invoicesRaisedAt?.toFixed(1)} s), every event published after ${seconds.toFixed(1)} s (subscription.activated and invoice.created: ${2 * COUNT})`);
console.log(`  Node CPU per renewal: ${SERVICES.map((service) => `${service} ${(cpu[service] / COUNT).toFixed(2)} ms`).join(', ')} (load average at the end ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`);
console.log(`  busy share of the run: ${SERVICES.map((service) => `${service} ${Math.round((cpu[service] / 1000 / seconds) * 100)} %`).join(', ')}`);
if (rawRate) console.log(`  raw: a renewal's own transaction in plain SQL (5 statements, 8 connections), ${rawCount} of them: ${rawRate.toFixed(0)} /s`);

printWarnings(Object.values(apps));
await Promise.all(Object.values(pools).map((pool) => pool.end()));
await Promise.all(Object.values(apps).map((app) => app.kill('SIGTERM')));
await infrastructure.stop();
if (PROFILE_DIR) {
  summariseProfiles(PROFILE_DIR, [runWindow]);
}
