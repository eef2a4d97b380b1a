#!/usr/bin/env node
// Customer create/retrieve through `/v1`, against the raw rate of the same SQL on the same
// PostgreSQL cluster, in one run: the ratio says how much of the database's speed the spine keeps.
//
//   npm run bench                                  # `npm start`'s single process (a fresh data dir)
//   BENCH_MODE=processes npm run bench             # every app its own process, events through Kafka
//   BENCH_MODE=processes BENCH_REPLICAS=2 npm run bench   # two gateways and two subscription services
//
// Options (environment): BENCH_SECONDS (10 per phase), BENCH_ROUNDS (3: the raw and /v1 loops run
// in turns, each a third of the phase at a time), BENCH_CONCURRENCY (16), BENCH_WORK (create,retrieve),
// BENCH_PROFILE=<dir> (CPU profiles of the measured processes, summarised at the end:
// `node tools/bench/profile-summary.mjs <dir>/*.cpuprofile`), KAFKA_BROKERS (processes mode:
// an existing broker; otherwise one is started from Maven Central).
//
// Raw: a plain `pg` pool (as many connections as clients) on a database of the same cluster
// migrated with the subscription service's own migrations (same tables, same indexes). A raw
// create writes what one `/v1` create writes, copied from a real one: the customer row, its
// outbox rows and its command_results row, in one transaction. A raw retrieve is the SELECT
// by id and tenant that the service runs. `/v1` runs the same work in turns with the raw loop
// (BENCH_ROUNDS) so a machine whose speed drifts weighs on both alike; last, `/v1` at half its
// measured peak rate (open loop: requests at fixed times, whatever the answers) gives the latency
// at that load, in turns with the raw SQL at the same rate (the latency the database alone gives
// at that load, on this run's disk). Each phase also counts the cluster's WAL flushes per request
// (pg_stat_io): what a request costs the disk.
// Each phase also reads the CPU time every process used (/proc), per request: the CPU ratio (raw
// work's CPU over /v1's, all processes counted) is the ratio a machine with CPU to spare for no
// one else would show, and it moves far less than rates do when neighbours load the machine.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import {
  closedLoop, cpuBetween, cpuByGroup, databaseName, loadAverage, ms, openLoop, phases, profileArgs, startProcesses, startSingleProcess, summariseProfiles, treeRssMiB, v1Client, walSyncs,
} from './harness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MODE = process.env.BENCH_MODE ?? 'single';
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1);
/** Turns in which the raw and /v1 loops alternate, each a slice of BENCH_SECONDS (harness `alternate`). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `create`, `retrieve` or both (default): one kind of work alone gives a profile of that work alone. */
const WORK = new Set((process.env.BENCH_WORK ?? 'create,retrieve').split(','));
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined;

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { Pool } = require('pg');
const loop = { seconds: SECONDS, concurrency: CONCURRENCY };

// ---------------------------------------------------------------------------------------------
// The raw SQL

/**
 * A database of the same cluster with the subscription service's tables and indexes, and the rows
 * one `/v1` create wrote (read back from the service's database) as templates for raw creates.
 */
async function prepareRaw(stack, customerId) {
  const { applyMigrations } = require('@recur/persistence');
  const rawDb = `bench_raw_${randomBytes(3).toString('hex')}`;
  await stack.ensureDatabase(rawDb);
  await applyMigrations({ databaseUrl: stack.urlFor(rawDb), migrationsDir: join(ROOT, 'apps', 'subscription', 'prisma', 'migrations'), libraries: [require('@recur/messaging').MESSAGING_MIGRATIONS, require('@recur/persistence').PERSISTENCE_MIGRATIONS] });
  const service = new Pool({ connectionString: stack.urlFor(databaseName('subscription')), max: 1 });
  const [customer] = (await service.query('SELECT * FROM customers WHERE id = $1', [customerId])).rows;
  const outbox = (await service.query("SELECT id, topic, key, type, payload, headers FROM outbox_events WHERE key = $1 ORDER BY seq", [customerId])).rows;
  const [result] = (await service.query("SELECT * FROM command_results WHERE rpc LIKE '%CreateCustomer' ORDER BY created_at DESC LIMIT 1")).rows;
  await service.end();
  if (!customer || outbox.length === 0 || !result) throw new Error('could not read back the rows of a /v1 create');
  return { pool: new Pool({ connectionString: stack.urlFor(rawDb), max: CONCURRENCY }), customer, outbox, result, ids: [] };
}

function rawCreate(raw) {
  const { customer, outbox, result } = raw;
  const rows = outbox.length;
  const outboxSql = `INSERT INTO outbox_events (id, topic, key, type, payload, headers) VALUES ${outbox.map((_, i) => `($${i * 6 + 1}, $${i * 6 + 2}, $${i * 6 + 3}, $${i * 6 + 4}, $${i * 6 + 5}, $${i * 6 + 6})`).join(', ')}`;
  return async (worker, i) => {
    const id = `cus_${randomBytes(12).toString('hex')}`;
    const client = await raw.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO customers (id, account_id, livemode, name, email, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)',
        [id, customer.account_id, customer.livemode, `Bench ${worker}-${i}`, `bench${worker}.${i}@example.com`, customer.metadata, new Date()],
      );
      const values = [];
      for (let r = 0; r < rows; r++) {
        const row = outbox[r];
        values.push(`evt_${randomBytes(12).toString('hex')}`, row.topic, id, row.type, JSON.stringify(row.payload), JSON.stringify(row.headers));
      }
      await client.query(outboxSql, values);
      await client.query(
        'INSERT INTO command_results (account_id, livemode, rpc, request_id, response) VALUES ($1, $2, $3, $4, $5)',
        [result.account_id, result.livemode, result.rpc, `req_${randomBytes(12).toString('hex')}`, result.response],
      );
      await client.query('COMMIT');
      raw.ids.push(id);
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}

function rawRetrieve(raw) {
  const { customer } = raw;
  return async (worker, i) => {
    const { rows } = await raw.pool.query(
      'SELECT id, account_id, livemode, name, email, metadata, created_at, updated_at, deleted_at FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3 LIMIT 1',
      [raw.ids[(worker * 7919 + i) % raw.ids.length], customer.account_id, customer.livemode],
    );
    return rows.length === 1;
  };
}

// ---------------------------------------------------------------------------------------------
// Through /v1

function api(stack) {
  const { call, close } = v1Client(stack, CONCURRENCY * 4);
  const ids = [];
  return {
    ids,
    close,
    create: async (worker, i) => {
      const { status, body } = await call('POST', '/v1/customers', { name: `Bench ${worker}-${i}`, email: `bench${worker}.${i}@example.com` });
      if (status !== 201) return false;
      ids.push(JSON.parse(body.toString()).id);
      return true;
    },
    retrieve: async (worker, i) => (await call('GET', `/v1/customers/${ids[(worker * 7919 + i) % ids.length]}`)).status === 200,
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * This bench measures what a request costs, so the gateway admits every request of its 16 clients:
 * with admission control on, a machine loaded by other work made it refuse most creates at once
 * (`503`s counted in the rates and dividing the CPU). `npm run bench:overload` measures admission control.
 */
const WITHOUT_ADMISSION_CONTROL = { ADMISSION_MAX_IN_FLIGHT: '0' };

if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const startedAt = Date.now();
const stack = MODE === 'processes'
  ? await startProcesses({ name: 'customers', scaled: 'subscription', replicas: REPLICAS, profileDir: PROFILE_DIR, appEnv: { gateway: WITHOUT_ADMISSION_CONTROL } })
  : await startSingleProcess({ profileArgs: profileArgs(PROFILE_DIR, 'single-process'), env: WITHOUT_ADMISSION_CONTROL });
console.log(`\nRecur customer benchmark (${stack.description})`);
console.log(`${CONCURRENCY} concurrent clients, ${SECONDS} s per phase; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; memory at rest ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);
console.log(`load average before: ${loadAverage()} on ${require('node:os').availableParallelism()} cores\n`);

const v1 = api(stack);
// Warm-up (JIT, pools, channels) whose last create supplies the raw rows' templates.
for (let i = 0; i < 50; i++) await v1.create(0, -i);
const raw = await prepareRaw(stack, v1.ids.at(-1));
for (let i = 0; i < 50; i++) await rawCreate(raw)(0, -i);

// What the stack burns doing nothing (timers, polls, Kafka fetches): it weighs on every phase.
const restBefore = cpuByGroup(stack);
await new Promise((resolve) => setTimeout(resolve, 3_000));
const atRest = cpuBetween(restBefore, cpuByGroup(stack));
console.log(`CPU at rest (ms per s): ${Object.keys(atRest).filter((g) => g !== 'bench client').map((g) => `${g} ${(atRest[g] / 3).toFixed(0)}`).join(', ')}\n`);

// The disk's share: WAL flushes per request (every database of the cluster), /v1 against raw.
const admin = new Pool({ connectionString: stack.urlFor('postgres'), max: 1 });
const { results, alternate, cpuCost, printCpuTable, windows } = phases(stack, { counters: { 'WAL flushes': () => walSyncs(admin) } });
if (WORK.has('create')) {
  await alternate(loop, ROUNDS, [['rawCreate', 'raw SQL: create (tx)', (slice) => closedLoop(slice, rawCreate(raw))], ['v1Create', '/v1: POST /v1/customers', (slice) => closedLoop(slice, v1.create)]]);
}
if (WORK.has('retrieve')) {
  await alternate(loop, ROUNDS, [['rawRetrieve', 'raw SQL: retrieve by id', (slice) => closedLoop(slice, rawRetrieve(raw))], ['v1Retrieve', '/v1: GET /v1/customers/:id', (slice) => closedLoop(slice, v1.retrieve)]]);
}
// `/v1` at half its peak, in turns with the raw SQL at that same rate: the latency the database
// itself gives at that load on this run's disk, the floor a `/v1` p99 is judged against.
for (const [work, name, rawWork, v1Work] of [['create', 'Create', rawCreate(raw), v1.create], ['retrieve', 'Retrieve', rawRetrieve(raw), v1.retrieve]].filter(([work]) => WORK.has(work))) {
  const rate = results[`v1${name}`].rate / 2;
  await alternate(loop, ROUNDS, [
    [`v1${name}Half`, `/v1 ${work} at ${rate.toFixed(0)}/s (half peak)`, (slice) => openLoop(slice, rate, v1Work)],
    [`raw${name}Half`, `raw ${work} at ${rate.toFixed(0)}/s (same rate)`, (slice) => openLoop(slice, rate, rawWork)],
  ]);
}

const pct = (a, b) => `${((100 * a.rate) / b.rate).toFixed(1)} %`;
const cpuPct = (v1Name, rawName) => `${((100 * cpuCost(rawName)) / cpuCost(v1Name)).toFixed(1)} %`;
console.log('\n| work | raw PostgreSQL (pg, same cluster) | through /v1 | ratio | CPU ratio | /v1 at half peak | raw at that rate |');
console.log('|---|---|---|---|---|---|---|');
for (const [work, name] of [['create a customer', 'Create'], ['retrieve a customer', 'Retrieve']].filter(([, name]) => results[`raw${name}`])) {
  const [rawR, v1R, halfR, rawHalfR] = [`raw${name}`, `v1${name}`, `v1${name}Half`, `raw${name}Half`].map((phase) => results[phase]);
  const latencies = (r) => `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}`;
  // The half-peak p99 is read against the disk's stalls (harness watchDiskStalls) in the same slices.
  const stalled = ({ outsideDiskStalls: outside }) => (outside?.stalls > 0 ? ` (${ms(outside.p99)} outside ${outside.stalls} disk stalls)` : '');
  console.log(`| ${work} | ${rawR.rate.toFixed(0)} /s, ${latencies(rawR)} | ${v1R.rate.toFixed(0)} /s, ${latencies(v1R)} | ${pct(v1R, rawR)} | ${cpuPct(`v1${name}`, `raw${name}`)} | ${halfR.rate.toFixed(0)} /s, ${latencies(halfR)}${stalled(halfR)} | ${latencies(rawHalfR)}${stalled(rawHalfR)} |`);
}
console.log('\nCPU time per request or transaction (µs), by process group, closed-loop phases:');
printCpuTable([['rawCreate', 'raw create'], ['v1Create', '/v1 create'], ['rawRetrieve', 'raw retrieve'], ['v1Retrieve', '/v1 retrieve']]);
console.log(`\nload average after: ${loadAverage()}; memory after load ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);
// The relay publishes every row of a claim in one produce request and stamps them with one time:
// rows per distinct stamp is the events each produce request carried, over the whole run.
const relayed = new Pool({ connectionString: stack.urlFor(databaseName('subscription')), max: 1 });
const [{ rows: published, batches }] = (await relayed.query('SELECT count(*)::int AS rows, count(DISTINCT published_at)::int AS batches FROM outbox_events WHERE published_at IS NOT NULL')).rows;
await relayed.end();
console.log(`subscription's outbox relay: ${published} events in ${batches} produce requests (${(published / Math.max(1, batches)).toFixed(2)} a request)`);

v1.close();
await raw.pool.end();
await admin.end();
await stack.stop();
if (PROFILE_DIR) {
  // The closed-loop /v1 phase's samples alone (create's when it ran): start-up and the raw phases left out.
  const measuredWindows = windows.v1Create ?? windows.v1Retrieve;
  console.log(`\nCPU profiles in ${PROFILE_DIR}, samples of the closed-loop ${windows.v1Create ? 'create' : 'retrieve'} phase through /v1:`);
  summariseProfiles(PROFILE_DIR, measuredWindows);
}
