#!/usr/bin/env node
// Customer create/retrieve through `/v1`, against the raw rate of the same SQL on the same
// PostgreSQL cluster, in one run: the ratio says how much of the database's speed the spine keeps.
//
//   npm run bench                                  # `npm start`'s single process (a fresh data dir)
//   BENCH_MODE=processes npm run bench             # every app its own process, events through Kafka
//   BENCH_MODE=processes BENCH_REPLICAS=2 npm run bench   # two gateways and two subscription services
//
// Options (environment): BENCH_SECONDS (10 per phase), BENCH_CONCURRENCY (16), BENCH_WORK (create,retrieve),
// BENCH_PROFILE=<dir> (CPU profiles of the measured processes, summarised at the end:
// `node tools/bench/profile-summary.mjs <dir>/*.cpuprofile`), KAFKA_BROKERS (processes mode:
// an existing broker; otherwise one is started from Maven Central).
//
// Raw: a plain `pg` pool (as many connections as clients) on a database of the same cluster
// migrated with the subscription service's own migrations (same tables, same indexes). A raw
// create writes what one `/v1` create writes, copied from a real one: the customer row, its
// outbox rows and its command_results row, in one transaction. A raw retrieve is the SELECT
// by id and tenant that the service runs. Then `/v1` runs the same work, interleaved phase by
// phase so a busy machine weighs on both alike; last, `/v1` at half its measured peak rate
// (open loop: requests at fixed times, whatever the answers) gives the latency at that load.
// Each phase also reads the CPU time every process used (/proc), per request: the CPU ratio (raw
// work's CPU over /v1's, all processes counted) is the ratio a machine with CPU to spare for no
// one else would show, and it moves far less than rates do when neighbours load the machine.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop as measureClosedLoop, httpClient, ms, openLoop as measureOpenLoop, printPhase } from './measure.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MODE = process.env.BENCH_MODE ?? 'single';
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 1);
/** `create`, `retrieve` or both (default): one kind of work alone gives a profile of that work alone. */
const WORK = new Set((process.env.BENCH_WORK ?? 'create,retrieve').split(','));
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined;
const SERVICES = ['catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'];
const databaseName = (app) => `recur_${app.replace(/-/g, '_')}`;

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { Pool } = require('pg');

// ---------------------------------------------------------------------------------------------
// Measuring

const loop = { seconds: SECONDS, concurrency: CONCURRENCY };
const closedLoop = (request) => measureClosedLoop(request, loop);
const openLoop = (rate, request) => measureOpenLoop(rate, request, loop);

/** Every process: parent, command name, CPU time (user + system, clock ticks), resident memory (kB). */
function processTable() {
  const table = new Map();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
      table.set(Number(entry), { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]), rssKiB: rss ? Number(rss[1]) : 0 });
    } catch { /* exited */ }
  }
  return table;
}

/** The processes and all their descendants. */
function withDescendants(table, rootPids) {
  const children = new Map();
  for (const [pid, { ppid }] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found = [];
  const stack = [...rootPids];
  while (stack.length) {
    const pid = stack.pop();
    if (table.has(pid)) found.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

function treeRssMiB(rootPids) {
  const table = processTable();
  return withDescendants(table, rootPids).reduce((sum, pid) => sum + table.get(pid).rssKiB, 0) / 1024;
}

/** CPU milliseconds used so far by each process of each group of the stack, and by this client. */
function cpuByGroup(stack) {
  const table = processTable();
  const groups = {};
  for (const [name, pids] of Object.entries(stack.processGroups(table))) groups[name] = new Map(pids.map((pid) => [pid, (table.get(pid)?.ticks ?? 0) * 10]));
  const own = process.cpuUsage();
  groups['bench client'] = new Map([[process.pid, (own.user + own.system) / 1000]]);
  return groups;
}

/**
 * CPU milliseconds each group used between two readings, process by process: a process started in
 * between counts from zero; one that exited (a pooled connection closed) is left out.
 */
function cpuBetween(before, after) {
  return Object.fromEntries(Object.entries(after).map(([group, pids]) => [group, [...pids].reduce((sum, [pid, ms]) => sum + ms - (before[group]?.get(pid) ?? 0), 0)]));
}

/** PostgreSQL's server and backends under a root process. */
const postgresUnder = (table, rootPid) => withDescendants(table, [rootPid]).filter((pid) => table.get(pid).comm === 'postgres');

// ---------------------------------------------------------------------------------------------
// The stack under test

const profileArgs = (name) => (PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}.cpuprofile`] : []);

/** `npm start` in a fresh data directory: one Node.js process, an embedded durable PostgreSQL. */
async function startSingleProcess() {
  const dataDir = mkdtempSync(join(tmpdir(), 'recur-bench-'));
  chmodSync(dataDir, 0o755);
  const port = 18080 + Math.floor(Math.random() * 1000);
  const pgPort = port + 1000;
  const child = spawn(process.execPath, [...profileArgs('single-process'), 'tools/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: dataDir, PORT: String(port), RECUR_PG_PORT: String(pgPort), METRICS_PORT: String(port + 2000), RECUR_GRPC_BASE_PORT: String(port + 3000), RECUR_SMTP_PORT: String(port + 4000), LOG_LEVEL: 'warn', KAFKA_BROKERS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const key = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /sandbox secret\s+(recur_test_sk_\w+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`stack exited (${code}):\n${output}`)));
  });
  const urlFor = (database) => `postgresql://postgres:postgres@127.0.0.1:${pgPort}/${database}`;
  return {
    description: "`npm start`: all seven apps in one Node.js process, in-process event bus",
    url: `http://127.0.0.1:${port}`,
    key,
    urlFor,
    ensureDatabase: (name) => ensureDatabase(urlFor('postgres'), name),
    pids: () => [child.pid],
    processGroups: (table) => ({ 'node (all 7 apps)': [child.pid], postgresql: postgresUnder(table, child.pid) }),
    async stop() {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function ensureDatabase(adminUrl, name) {
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  const found = await pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount === 0) await pool.query(`CREATE DATABASE "${name}"`);
  await pool.end();
}

/**
 * Accepts TCP connections and hands each to the next backend in turn, as a Kubernetes Service
 * (kube-proxy) does: HTTP keep-alive connections and gRPC channels are balanced per connection.
 */
function startBalancer(backends) {
  let next = 0;
  const server = createServer((client) => {
    const upstream = createConnection(backends[next++ % backends.length], '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, close: () => server.close() })));
}

/**
 * Every app as its own process (as Kubernetes runs them) on one durable embedded PostgreSQL,
 * events through Kafka; REPLICAS gateways and subscription services, each pair behind a balancer.
 */
async function startProcesses() {
  const { startEmbeddedPostgres, startKafkaBroker, startMailCatcher } = require('@recur/local-infra');
  const { freePort, startApp } = require('@recur/testing');
  const dir = mkdtempSync(join(tmpdir(), 'recur-bench-'));
  chmodSync(dir, 0o755);
  const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), persistent: true });
  const kafka = process.env.KAFKA_BROKERS ? undefined : await startKafkaBroker({});
  const brokers = process.env.KAFKA_BROKERS || kafka.brokers;
  const common = { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: `bench-${randomBytes(3).toString('hex')}`, METRICS_PORT: '0', GRPC_HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const mail = await startMailCatcher();
  const appEnv = { invoicing: { SMTP_URL: mail.url } };
  const apps = [];
  const balancers = [];
  const addresses = {};
  for (const service of SERVICES) {
    await postgres.ensureDatabase(databaseName(service));
    const replicas = service === 'subscription' ? REPLICAS : 1;
    const ports = [];
    for (let replica = 0; replica < replicas; replica++) {
      const grpcPort = await freePort();
      apps.push(await startApp(service, {
        env: { ...common, DATABASE_URL: postgres.urlFor(databaseName(service)), GRPC_PORT: String(grpcPort), ...appEnv[service] },
        ready: { grpcPort },
        nodeArgs: service === 'subscription' ? profileArgs(`subscription-${replica + 1}`) : [],
      }));
      ports.push(grpcPort);
    }
    if (service === 'subscription') {
      const balancer = await startBalancer(ports);
      balancers.push(balancer);
      addresses[service] = `127.0.0.1:${balancer.port}`;
    } else {
      addresses[service] = `127.0.0.1:${ports[0]}`;
    }
  }
  await postgres.ensureDatabase(databaseName('gateway'));
  const operatorToken = randomBytes(16).toString('hex');
  const gatewayPorts = [];
  for (let replica = 0; replica < REPLICAS; replica++) {
    const httpPort = await freePort();
    apps.push(await startApp('gateway', {
      env: {
        ...common,
        DATABASE_URL: postgres.urlFor(databaseName('gateway')),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        RECUR_OPERATOR_TOKEN: operatorToken,
        ...Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`, addresses[service]])),
      },
      ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
      nodeArgs: profileArgs(`gateway-${replica + 1}`),
    }));
    gatewayPorts.push(httpPort);
  }
  const front = await startBalancer(gatewayPorts);
  balancers.push(front);
  const url = `http://127.0.0.1:${front.port}`;
  const operator = async (path, body) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const account = await operator('/operator/accounts', { name: 'Bench' });
  const { secret: key } = await operator(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' });
  return {
    description: `every app its own process, events through Kafka; ${REPLICAS} gateway and ${REPLICAS} subscription process(es), each set behind a per-connection TCP balancer`,
    url,
    key,
    urlFor: postgres.urlFor,
    ensureDatabase: (name) => postgres.ensureDatabase(name),
    pids: () => apps.map((app) => app.pid),
    processGroups: (table) => ({
      gateway: apps.filter((app) => app.app === 'gateway').map((app) => app.pid),
      subscription: apps.filter((app) => app.app === 'subscription').map((app) => app.pid),
      'other apps': apps.filter((app) => app.app !== 'gateway' && app.app !== 'subscription').map((app) => app.pid),
      postgresql: postgresUnder(table, process.pid),
      ...(kafka ? { kafka: withDescendants(table, [process.pid]).filter((pid) => table.get(pid).comm === 'java') } : {}),
    }),
    async stop() {
      for (const balancer of balancers) balancer.close();
      await Promise.all(apps.map((app) => app.kill('SIGTERM')));
      await kafka?.stop();
      await postgres.stop();
      await mail.stop();
    },
  };
}

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
  await applyMigrations({ databaseUrl: stack.urlFor(rawDb), migrationsDir: join(ROOT, 'apps', 'subscription', 'prisma', 'migrations') });
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
  const { call: send, agent } = httpClient({ url: stack.url, key: stack.key, maxSockets: CONCURRENCY * 4 });
  const call = async (method, path, body) => {
    const { status, body: bytes } = await send(method, path, body);
    return { status, text: bytes.toString() };
  };
  const ids = [];
  return {
    ids,
    agent,
    create: async (worker, i) => {
      const { status, text } = await call('POST', '/v1/customers', { name: `Bench ${worker}-${i}`, email: `bench${worker}.${i}@example.com` });
      if (status !== 201) return false;
      ids.push(JSON.parse(text).id);
      return true;
    },
    retrieve: async (worker, i) => (await call('GET', `/v1/customers/${ids[(worker * 7919 + i) % ids.length]}`)).status === 200,
  };
}

// ---------------------------------------------------------------------------------------------

if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const startedAt = Date.now();
const stack = MODE === 'processes' ? await startProcesses() : await startSingleProcess();
console.log(`\nRecur customer benchmark (${stack.description})`);
console.log(`${CONCURRENCY} concurrent clients, ${SECONDS} s per phase; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; memory at rest ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);
console.log(`load average before: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${require('node:os').availableParallelism()} cores\n`);

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

const results = {};
const cpuPerRequest = {};
const run = async (name, label, work) => {
  const before = cpuByGroup(stack);
  results[name] = await work();
  const used = cpuBetween(before, cpuByGroup(stack));
  printPhase(label, results[name]);
  cpuPerRequest[name] = Object.fromEntries(Object.entries(used).map(([group, ms]) => [group, (ms * 1000) / results[name].count]));
};
if (WORK.has('create')) {
  await run('rawCreate', 'raw SQL: create (tx)', () => closedLoop(rawCreate(raw)));
  await run('v1Create', '/v1: POST /v1/customers', () => closedLoop(v1.create));
}
if (WORK.has('retrieve')) {
  await run('rawRetrieve', 'raw SQL: retrieve by id', () => closedLoop(rawRetrieve(raw)));
  await run('v1Retrieve', '/v1: GET /v1/customers/:id', () => closedLoop(v1.retrieve));
}
if (WORK.has('create')) await run('v1CreateHalf', `/v1 create at ${(results.v1Create.rate / 2).toFixed(0)}/s (half peak)`, () => openLoop(results.v1Create.rate / 2, v1.create));
if (WORK.has('retrieve')) await run('v1RetrieveHalf', `/v1 retrieve at ${(results.v1Retrieve.rate / 2).toFixed(0)}/s (half peak)`, () => openLoop(results.v1Retrieve.rate / 2, v1.retrieve));

const pct = (a, b) => `${((100 * a.rate) / b.rate).toFixed(1)} %`;
/** CPU of all parties per unit of work; their ratio is what the machine would give were CPU its only limit. */
const cpuCost = (name) => Object.values(cpuPerRequest[name]).reduce((sum, us) => sum + us, 0);
const cpuPct = (v1Name, rawName) => `${((100 * cpuCost(rawName)) / cpuCost(v1Name)).toFixed(1)} %`;
console.log('\n| work | raw PostgreSQL (pg, same cluster) | through /v1 | ratio | CPU ratio | /v1 at half peak |');
console.log('|---|---|---|---|---|---|');
for (const [work, rawName, v1Name, halfName] of [
  ['create a customer', 'rawCreate', 'v1Create', 'v1CreateHalf'],
  ['retrieve a customer', 'rawRetrieve', 'v1Retrieve', 'v1RetrieveHalf'],
].filter(([, rawName]) => results[rawName])) {
  const [rawR, v1R, halfR] = [results[rawName], results[v1Name], results[halfName]];
  console.log(`| ${work} | ${rawR.rate.toFixed(0)} /s, p50 ${ms(rawR.p50)}, p99 ${ms(rawR.p99)} | ${v1R.rate.toFixed(0)} /s, p50 ${ms(v1R.p50)}, p99 ${ms(v1R.p99)} | ${pct(v1R, rawR)} | ${cpuPct(v1Name, rawName)} | ${halfR.rate.toFixed(0)} /s, p50 ${ms(halfR.p50)}, p99 ${ms(halfR.p99)} |`);
}
console.log('\nCPU time per request or transaction (µs), by process group, closed-loop phases:');
const groups = Object.keys(Object.values(cpuPerRequest)[0]);
console.log(`| phase | ${groups.join(' | ')} |`);
console.log(`|---|${groups.map(() => '---').join('|')}|`);
for (const [name, label] of [['rawCreate', 'raw create'], ['v1Create', '/v1 create'], ['rawRetrieve', 'raw retrieve'], ['v1Retrieve', '/v1 retrieve']].filter(([name]) => cpuPerRequest[name])) {
  console.log(`| ${label} | ${groups.map((group) => cpuPerRequest[name][group].toFixed(0)).join(' | ')} |`);
}
console.log(`\nload average after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; memory after load ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);

v1.agent.destroy();
await raw.pool.end();
await stack.stop();
if (PROFILE_DIR) {
  console.log(`\nCPU profiles in ${PROFILE_DIR}:`);
  execFileSync(process.execPath, [join(ROOT, 'tools', 'bench', 'profile-summary.mjs'), ...readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(PROFILE_DIR, f))], { stdio: 'inherit' });
}
