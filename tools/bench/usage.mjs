#!/usr/bin/env node
// Usage ingest through `/v1` against the raw PostgreSQL rate of inserting the same usage rows,
// on the same cluster, in one run (issue 13's benchmark):
//
//   npm run bench:usage
//
// Options (environment): BENCH_SECONDS (10 per phase), BENCH_ROUNDS (3: the raw and /v1 loops
// run in turns, each a third of the phase at a time), BENCH_CONCURRENCY (16 clients),
// BENCH_SUBSCRIPTIONS (64), BENCH_BATCH (records per batch, 1000), BENCH_BATCH_CONCURRENCY (4),
// BENCH_PROFILE=<dir> (`--cpu-prof` profiles of the stack; the /v1 phases' samples summarised at the end),
// BENCH_MODE=processes (every app its own process, events through Kafka, as Kubernetes runs them;
// BENCH_REPLICAS=2: two gateways and two usage-metering services behind per-connection balancers).
//
// The stack is `npm start` by default (all apps in one Node.js process, a durable embedded PostgreSQL).
// Raw: a plain `pg` pool (as many connections as clients) on a database of the same cluster
// migrated with usage-metering's own migrations (same tables, same indexes); a raw insert is one
// INSERT of a usage_records row like the ones `/v1` stores (same tenant, subscriptions, metric,
// key and period columns), autocommitted. Beside it, for the story, the service's own ingest
// statement (the record and its period total, committed on its own as the service runs it) run raw.
// `/v1` single records (closed loop) run in turns with the raw loops, then single records at half
// that peak (open loop: the latency at that load), then raw and `/v1` batches in turns. Last, the
// totals check: every record `/v1` accepted is counted once — the service's totals and row count
// equal what the bench sent, and replaying a sample counts nothing.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop, loadAverage, ms, openLoop, phases, profileArgs, startProcesses, startSingleProcess, summariseProfiles, v1Client } from './harness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 64);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const BATCH_CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined;
const MODE = process.env.BENCH_MODE ?? 'single';
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1);
/** Turns in which the raw and /v1 loops alternate, each a slice of BENCH_SECONDS (harness `alternate`). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `raw`, `single`, `batch` or all (default): one kind of work alone gives a profile of that work alone. */
const WORK = new Set((process.env.BENCH_WORK ?? 'raw,single,batch').split(','));
/** Each subscription's limit: crossed during the run, so the alert path runs too (and is checked). */
const LIMIT = 2_000;
const loop = { seconds: SECONDS, concurrency: CONCURRENCY };

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { Pool } = require('pg');
const { applyMigrations } = require('@recur/persistence');
const { INGEST_SQL, INGEST_STATEMENT_NAME, ingestParameters } = require(join(ROOT, 'apps', 'usage-metering', 'dist', 'usage', 'usage.repository.js'));

if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const startedAt = Date.now();
// Invoices raised for the set-up's subscriptions send no e-mail: rendering their PDFs is not usage work.
const noInvoiceMail = { INVOICE_MAIL_ON_FINALIZE: 'false' };
const stack = MODE === 'processes'
  ? await startProcesses({ name: 'usage', scaled: 'usage-metering', replicas: REPLICAS, profileDir: PROFILE_DIR, appEnv: { invoicing: noInvoiceMail } })
  : await startSingleProcess({ profileArgs: profileArgs(PROFILE_DIR, 'single-process'), env: noInvoiceMail });
const api = v1Client(stack, CONCURRENCY * 4);
const post = async (path, body) => {
  const { status, body: bytes } = await api.call('POST', path, body);
  return { status, body: JSON.parse(bytes.toString()) };
};
console.log(`\nRecur usage benchmark (${stack.description})`);
console.log(`${CONCURRENCY} concurrent clients, ${SECONDS} s per phase, ${SUBSCRIPTIONS} subscriptions; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
console.log(`load average before: ${loadAverage()} on ${require('node:os').availableParallelism()} cores\n`);

// A plan metering api_calls, SUBSCRIPTIONS subscriptions with a limit of LIMIT each.
const plan = await post('/v1/plans', { name: 'Bench metered', pricing_model: 'flat_rate', amount_monthly: 0 });
await post(`/v1/plans/${plan.body.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 1, included_quantity: 0 });
const subscriptions = [];
for (let s = 0; s < SUBSCRIPTIONS; s++) {
  const customer = await post('/v1/customers', { name: `Bench ${s}`, email: `bench${s}@example.com` });
  const subscription = await post('/v1/subscriptions', { customer: customer.body.id, plan: plan.body.id, billing_interval: 'monthly' });
  subscriptions.push(subscription.body.id);
}
for (const subscription of subscriptions) {
  for (let attempt = 0; ; attempt++) {
    const answer = await post('/v1/usage/limits', { subscription, metric_name: 'api_calls', limit: LIMIT });
    if (answer.status === 200) break;
    if (attempt > 200) throw new Error(`usage-metering never learned of ${subscription}: ${JSON.stringify(answer.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the bench sent and `/v1` accepted as new, per subscription: the totals check compares. */
const expected = new Map(subscriptions.map((id) => [id, 0]));
let accepted = 0;
const sentSample = [];
const runId = randomBytes(3).toString('hex');
const recordFor = (phase, worker, i) => ({
  subscription: subscriptions[(worker * 7919 + i) % SUBSCRIPTIONS],
  metric_name: 'api_calls',
  quantity: (i % 5) + 1,
  idempotency_key: `${runId}-${phase}-${worker}-${i}`,
});
const single = (phase) => async (worker, i) => {
  const record = recordFor(phase, worker, i);
  const { status } = await api.call('POST', '/v1/usage', record);
  if (status !== 201) return false;
  expected.set(record.subscription, expected.get(record.subscription) + record.quantity);
  accepted++;
  if (sentSample.length < 500 && i % 7 === 0) sentSample.push(record);
  return true;
};
const batch = async (worker, i) => {
  const records = Array.from({ length: BATCH }, (_, n) => recordFor(`batch-${worker}-${i}`, 0, n));
  const { status, body } = await api.call('POST', '/v1/usage/batch', { records });
  if (status !== 200) return false;
  const { data } = JSON.parse(body.toString());
  let created = 0;
  data.forEach((result, n) => {
    if (result.status !== 'created') return;
    created++;
    expected.set(records[n].subscription, expected.get(records[n].subscription) + records[n].quantity);
  });
  accepted += created;
  return created;
};

// Raw: usage-metering's tables and indexes in a database of the same cluster, the tenant and the
// subscriptions' period as the service stores them (read back after a warm-up through /v1).
for (let i = 0; i < 100; i++) await single('warmup')(0, i);
const service = new Pool({ connectionString: stack.urlFor('recur_usage_metering'), max: 1 });
const [template] = (await service.query('SELECT account_id, livemode, period_start, period_end FROM usage_records LIMIT 1')).rows;
await service.end();
const rawDb = `bench_usage_raw_${runId}`;
await stack.ensureDatabase(rawDb);
await applyMigrations({ databaseUrl: stack.urlFor(rawDb), migrationsDir: join(ROOT, 'apps', 'usage-metering', 'prisma', 'migrations'), libraries: [require('@recur/messaging').MESSAGING_MIGRATIONS, require('@recur/persistence').PERSISTENCE_MIGRATIONS] });
const raw = new Pool({ connectionString: stack.urlFor(rawDb), max: CONCURRENCY });
const rawRow = (phase, worker, i) => {
  const record = recordFor(phase, worker, i);
  const now = new Date();
  return [`ur_${randomBytes(12).toString('hex')}`, template.account_id, template.livemode, record.subscription, record.metric_name, record.quantity, record.idempotency_key, now, false, template.period_start, template.period_end, now];
};
const RAW_INSERT = `INSERT INTO usage_records (id, account_id, livemode, subscription_id, metric_name, quantity, idempotency_key, "timestamp", timestamp_given, period_start, period_end, created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;
const rawInsert = async (worker, i) => (await raw.query(RAW_INSERT, rawRow('raw', worker, i))).rowCount === 1;
/** The service's own ingest statement for one record, committed on its own as the service runs it (no limit watches raw rows). */
const rawIngest = async (worker, i) => {
  const [id, accountId, livemode, subscription, metric, quantity, key, at, given, start, end, created] = rawRow('rawtx', worker, i);
  const input = { subscriptionId: subscription, metricName: metric, quantity, idempotencyKey: key };
  await raw.query({ name: INGEST_STATEMENT_NAME, text: INGEST_SQL, values: ingestParameters({ accountId, livemode }, [{ id, input, placement: { timestampAt: at, timestampGiven: given, period: { start, end } } }], created) });
  return true;
};
const rawBatch = async (worker, i) => {
  const rows = Array.from({ length: BATCH }, (_, n) => rawRow(`rawbatch-${worker}-${i}`, 0, n));
  const column = (index) => rows.map((row) => row[index]);
  const { rowCount } = await raw.query(
    `INSERT INTO usage_records (id, account_id, livemode, subscription_id, metric_name, quantity, idempotency_key, "timestamp", timestamp_given, period_start, period_end, created_at)
     SELECT id, $2, $3, s, m, q, k, t, false, $8, $9, t FROM unnest($1::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $10::timestamptz[]) AS r(id, s, m, q, k, t)`,
    [column(0), template.account_id, template.livemode, column(3), column(4), column(5), column(6), template.period_start, template.period_end, column(7)],
  );
  return rowCount;
};

// Warm-up of the raw side too (connections opened, statements planned), as /v1's warm-up above.
await closedLoop({ seconds: 1, concurrency: CONCURRENCY }, (worker, i) => rawInsert(worker, i + 1_000_000));

const { results, windows, cpuCost, printCpuTable, run, alternate } = phases(stack, { per: 'units' });
const batchLoop = { seconds: SECONDS, concurrency: BATCH_CONCURRENCY };
const singles = [
  ...(WORK.has('raw') ? [['rawInsert', 'raw SQL: INSERT one usage row', (slice) => closedLoop(slice, rawInsert)], ['rawIngest', 'raw SQL: ingest statement', (slice) => closedLoop(slice, rawIngest)]] : []),
  ...(WORK.has('single') ? [['v1Single', '/v1: POST /v1/usage', (slice) => closedLoop(slice, single('single'))]] : []),
];
if (singles.length > 0) await alternate(loop, ROUNDS, singles);
if (WORK.has('single')) await run('v1Half', `/v1 at ${(results.v1Single.rate / 2).toFixed(0)}/s (half peak)`, () => openLoop(loop, results.v1Single.rate / 2, single('half')));
const batches = [
  ...(WORK.has('raw') ? [['rawBatch', `raw SQL: INSERT ${BATCH} rows`, (slice) => closedLoop(slice, rawBatch)]] : []),
  ...(WORK.has('batch') ? [['v1Batch', `/v1: POST /v1/usage/batch (${BATCH})`, (slice) => closedLoop(slice, batch)]] : []),
];
if (batches.length > 0) await alternate(batchLoop, ROUNDS, batches);

// The totals check: what /v1 accepted is what usage-metering counts, once.
for (const record of sentSample) {
  const { status, body } = await post('/v1/usage', record);
  if (status !== 201) throw new Error(`replay refused: ${status} ${JSON.stringify(body)}`);
}
let lost = 0;
let alertsOk = true;
for (const subscription of subscriptions) {
  const body = JSON.parse((await api.call('GET', `/v1/usage/summary?subscription=${subscription}`)).body.toString());
  const total = body.metrics.find((metric) => metric.metric_name === 'api_calls').total;
  if (total !== expected.get(subscription)) lost += expected.get(subscription) - total;
  const alerts = JSON.parse((await api.call('GET', `/v1/usage/alerts?subscription=${subscription}&limit=10`)).body.toString());
  const wanted = [80, 100].filter((threshold) => total * 100 >= LIMIT * threshold).length;
  if (alerts.total !== wanted) alertsOk = false;
}
const check = new Pool({ connectionString: stack.urlFor('recur_usage_metering'), max: 1 });
const stored = Number((await check.query('SELECT count(*) AS n FROM usage_records')).rows[0].n);
await check.end();

const pct = (a, b) => `${((100 * a) / b).toFixed(1)} %`;
const none = { rate: NaN, unitRate: NaN, p50: NaN, p99: NaN, errors: 0 };
const { rawInsert: ri = none, rawIngest: rt = none, v1Single: v1 = none, v1Half: half = none, rawBatch: rb = none, v1Batch: vb = none } = results;
console.log('\n| work | raw PostgreSQL (pg, same cluster) | through /v1 | ratio | CPU ratio |');
console.log('|---|---|---|---|---|');
console.log(`| one record | ${ri.rate.toFixed(0)} /s, p50 ${ms(ri.p50)}, p99 ${ms(ri.p99)} | ${v1.rate.toFixed(0)} /s, p50 ${ms(v1.p50)}, p99 ${ms(v1.p99)} | ${pct(v1.rate, ri.rate)} | ${pct(cpuCost('rawInsert'), cpuCost('v1Single'))} |`);
console.log(`| one record, the service's statement raw | ${rt.rate.toFixed(0)} /s, p50 ${ms(rt.p50)}, p99 ${ms(rt.p99)} | (above) | ${pct(v1.rate, rt.rate)} | ${pct(cpuCost('rawIngest'), cpuCost('v1Single'))} |`);
console.log(`| batches of ${BATCH} (records/s) | ${rb.unitRate.toFixed(0)} /s | ${vb.unitRate.toFixed(0)} /s, p50 ${ms(vb.p50)} per batch | ${pct(vb.unitRate, rb.unitRate)} | ${pct(cpuCost('rawBatch'), cpuCost('v1Batch'))} |`);
console.log(`\n/v1 single at half peak (${half.rate.toFixed(0)} /s): p50 ${ms(half.p50)}, p99 ${ms(half.p99)}, errors ${half.errors}`);
console.log('\nCPU time per record (µs), by process group:');
printCpuTable([['rawInsert', 'raw insert'], ['rawIngest', 'raw ingest statement'], ['v1Single', '/v1 single'], ['rawBatch', 'raw batch'], ['v1Batch', '/v1 batch']]);
console.log(`\nTotals check: ${accepted} records accepted as new, ${stored} stored, ${lost === 0 ? 'every subscription total equal to what was sent' : `${lost} units missing or extra`}; ${sentSample.length} replays counted nothing; alerts ${alertsOk ? 'exactly one per threshold crossed' : 'WRONG'}.`);
console.log(`Targets: single ≥ 50 % of raw insert: ${v1.rate >= ri.rate / 2 ? 'met' : 'not met'}; batch ≥ 20 000 records/s: ${vb.unitRate >= 20_000 ? 'met' : 'not met'}; p99 < 50 ms at half peak: ${half.p99 < 50 ? 'met' : 'not met'}.`);
console.log(`load average after: ${loadAverage()}`);

api.close();
await raw.end();
await stack.stop();
if (PROFILE_DIR) {
  for (const [name, label] of [['v1Single', '/v1 single records (closed loop)'], ['v1Batch', '/v1 batches']].filter(([name]) => windows[name])) {
    console.log(`\nCPU profile in ${PROFILE_DIR}, ${label} alone (${windows[name].length} spans of the monotonic clock):`);
    summariseProfiles(PROFILE_DIR, windows[name]);
  }
}
if (stored !== accepted || lost !== 0 || !alertsOk) process.exit(1);
