#!/usr/bin/env node
// Soak: the mixed load at half the peak for a long while, watching what must not grow.
//
//   npm run bench:soak                            # 30 minutes on `npm start`'s single process
//   SOAK_MINUTES=2 npm run bench:soak             # the short form; exits 1 when a backlog grows
//   BENCH_MODE=processes npm run bench:soak       # every app its own process, events through Kafka
//
// Options (environment): SOAK_MINUTES (30), SOAK_RATE (requests a second; default half the peak,
// measured first with a closed loop of BENCH_CONCURRENCY (16) clients for BENCH_SECONDS (10)),
// BENCH_ACCOUNTS (8). The load is many-accounts-load.mjs's (creates, retrieves, lists of customers) from
// several accounts, each with a webhook endpoint for `customer.created` on a local receiver, so
// every create also makes an outbox event, inbox claims and a delivery job.
//
// Every minute it prints each process's memory (RSS; PostgreSQL's backends as their summed PSS),
// p50/p99 of the minute's answers, and the backlogs, read from every service's database: outbox
// rows not yet published, inbox rows (these grow by design, a row per event consumed: the rows a
// minute adds are what to watch), and jobs due and not done (billing steps, webhook deliveries,
// invoice e-mails, payment checks, refunds, wallet top-ups). At the end: each one's slope per
// minute. A backlog grows when its slope exceeds GROWTH_ROWS_PER_MINUTE or half a percent of the
// requests a minute, whichever is larger; the run then exits 1.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop, databaseName, loadAverage, memoryByProcess, openLoop, SERVICES, startProcesses, startSingleProcess } from './harness.mjs';
import { closeAccounts, isSuccess, listenForCustomerCreated, MIX, mixedRequest, outcomes, p50p99, prepareAccounts } from './many-accounts-load.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PEAK_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 8);
const MODE = process.env.BENCH_MODE ?? 'single';
/** Backlogs are read this often; their slopes are fitted to every reading after the first half minute. */
const SAMPLE_MS = 10_000;
/** A backlog whose slope stays under this many rows a minute (or half a percent of the requests a minute) is flat. */
const GROWTH_ROWS_PER_MINUTE = 20;

/** Job tables (each service's DueRowsTable, @recur/jobs): rows due and not done. */
const JOB_TABLES = [
  ['subscription', 'billing_jobs', "status = 'pending' AND due_at <= now()"],
  ['webhook-dispatch', 'deliveries', "status = 'pending' AND next_attempt_at <= now()"],
  ['invoicing', 'invoice_mails', "status = 'pending' AND next_attempt_at <= now()"],
  ['payments', 'payments', 'due_at <= now()'],
  ['payments', 'refunds', 'due_at <= now()'],
  ['payments', 'wallet_top_ups', 'due_at <= now()'],
];

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { Pool } = require('pg');
const startedAt = Date.now();
const stack = MODE === 'processes'
  ? await startProcesses({ name: 'soak', scaled: 'subscription', appEnv: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } })
  : await startSingleProcess({ stderr: 'ignore' });
console.log(`\nRecur soak (${stack.description}); stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
console.log(`load average before: ${loadAverage()} on ${availableParallelism()} cores (the machine is shared: read the slopes, not the rates)`);

const accounts = await prepareAccounts(stack, { accounts: ACCOUNTS, connections: Math.ceil(64 / ACCOUNTS) });
const receiver = await listenForCustomerCreated(accounts);
const pools = Object.fromEntries(SERVICES.map((app) => [app, new Pool({ connectionString: stack.urlFor(databaseName(app)), max: 1 })]));

/** Outbox rows not yet published, inbox rows and due jobs, summed over the services' databases. */
async function backlogs() {
  let outbox = 0;
  let inbox = 0;
  let jobs = 0;
  for (const [app, pool] of Object.entries(pools)) {
    const { rows: [tables] } = await pool.query("SELECT to_regclass('outbox_events') IS NOT NULL AS outbox, to_regclass('inbox_events') IS NOT NULL AS inbox");
    if (tables.outbox) outbox += Number((await pool.query('SELECT count(*) FROM outbox_events WHERE published_at IS NULL')).rows[0].count);
    if (tables.inbox) inbox += Number((await pool.query('SELECT count(*) FROM inbox_events')).rows[0].count);
    for (const [, table, due] of JOB_TABLES.filter(([owner]) => owner === app)) jobs += Number((await pool.query(`SELECT count(*) FROM ${table} WHERE ${due}`)).rows[0].count);
  }
  return { outbox, inbox, jobs };
}

// The rate: SOAK_RATE, or half the peak of a closed loop (also the warm-up).
let rate = Number(process.env.SOAK_RATE ?? 0);
if (!rate) {
  const tally = outcomes();
  await closedLoop({ seconds: PEAK_SECONDS, concurrency: CONCURRENCY }, mixedRequest(accounts, tally));
  rate = tally.count(isSuccess) / PEAK_SECONDS / 2;
  console.log(`peak ${(rate * 2).toFixed(0)} answered/s (closed loop of ${CONCURRENCY}, ${PEAK_SECONDS} s)`);
}
console.log(`soak: ${MINUTES} min at ${rate.toFixed(0)} requests/s; mix: ${MIX}; ${ACCOUNTS} accounts, each with a webhook endpoint for customer.created\n`);

const samples = [];
const memory = [];
const soakStart = performance.now();
const minutesNow = () => (performance.now() - soakStart) / 60_000;
const sample = async () => samples.push({ at: minutesNow(), ...(await backlogs()) });
const sampler = setInterval(() => void sample().catch((error) => console.error(`backlog reading failed: ${error.message}`)), SAMPLE_MS);
await sample();
let previousInbox = samples[0].inbox;
let requests = 0;
for (let minute = 1; minute <= MINUTES; minute++) {
  const tally = outcomes();
  await openLoop({ seconds: 60, concurrency: 64, firstIndex: minute * 10_000_000 }, rate, mixedRequest(accounts, tally));
  requests += tally.count(() => true);
  const now = { at: minutesNow(), ...(await backlogs()) };
  samples.push(now);
  const mem = memoryByProcess(stack);
  memory.push({ at: now.at, ...mem });
  const errors = tally.count((status) => !isSuccess(status));
  // Which answers they were: a shed request (503 admission, 429 rate limit) is the gateway's choice, a 500 a bug.
  const errorKinds = errors === 0 ? '' : ` (${tally.describe().split(', ').filter((entry) => !entry.startsWith('2')).join(', ')})`;
  console.log(
    `min ${String(minute).padStart(2)}  ${p50p99(tally.latencies(isSuccess))}  errors ${errors}${errorKinds}  | ${Object.entries(mem).map(([group, mib]) => `${group} ${mib.toFixed(0)} MiB`).join(', ')}` +
      `  | outbox unpublished ${now.outbox}, inbox ${now.inbox} (+${now.inbox - previousInbox}), jobs due ${now.jobs}, webhooks received ${receiver.received()}`,
  );
  previousInbox = now.inbox;
}
clearInterval(sampler);

/** Least-squares slope of `value` over `at` (minutes). */
function slope(points, value) {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.at, 0) / n;
  const my = points.reduce((s, p) => s + value(p), 0) / n;
  const sxy = points.reduce((s, p) => s + (p.at - mx) * (value(p) - my), 0);
  const sxx = points.reduce((s, p) => s + (p.at - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const steady = samples.filter((s) => s.at >= 0.5).sort((a, b) => a.at - b.at);
const threshold = Math.max(GROWTH_ROWS_PER_MINUTE, (0.005 * requests) / MINUTES);
console.log(`\nslopes per minute (backlogs: ${steady.length} readings from the first half minute on; growing above ${threshold.toFixed(0)} rows a minute):`);
let growing = false;
for (const [name, value] of [['outbox unpublished', (s) => s.outbox], ['jobs due', (s) => s.jobs]]) {
  const perMinute = slope(steady, value);
  const grows = perMinute > threshold;
  growing ||= grows;
  console.log(`  ${name.padEnd(20)} ${perMinute.toFixed(1).padStart(8)} rows/min  ${grows ? 'GROWING' : 'flat'}`);
}
// The inbox grows a row per event consumed: flat means its growth per minute does not itself grow.
const inboxAdded = samples.slice(1).map((s, i) => ({ at: s.at, added: (s.inbox - samples[i].inbox) / (s.at - samples[i].at) })).filter((s) => s.at >= 0.5);
console.log(`  ${'inbox rows'.padEnd(20)} ${slope(steady, (s) => s.inbox).toFixed(1).padStart(8)} rows/min (a row per event consumed); its rate's own slope ${slope(inboxAdded, (s) => s.added).toFixed(1)} rows/min²`);
// Memory: the second half of the run, once the heaps have grown to their working size.
const settled = memory.filter((m) => m.at >= MINUTES / 2);
for (const group of Object.keys(memory[0] ?? {}).filter((key) => key !== 'at')) {
  const perMinute = slope(settled.length >= 2 ? settled : memory, (m) => m[group]);
  console.log(`  ${`${group} memory`.padEnd(20)} ${perMinute.toFixed(2).padStart(8)} MiB/min over the ${settled.length >= 2 ? 'second half' : 'run'} (${memory[0][group].toFixed(0)} → ${memory.at(-1)[group].toFixed(0)} MiB)`);
}
console.log(`\nload average after: ${loadAverage()}; ${requests} requests, ${receiver.received()} webhook deliveries received`);

receiver.close();
await closeAccounts(accounts);
await Promise.all(Object.values(pools).map((pool) => pool.end()));
await stack.stop();
if (growing) {
  console.error('\nFAILED: a backlog grew during the soak');
  process.exitCode = 1;
}
