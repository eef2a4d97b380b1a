// The measuring parts a benchmark of `/v1` against raw SQL needs: closed and open loops with
// percentiles, CPU time per process from /proc, `npm start` in a fresh data directory, and a
// keep-alive HTTP client. (tools/bench/usage.mjs uses it; customers.mjs still carries its own copy.)
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';

const require = createRequire(import.meta.url);
const { Pool } = require('pg');

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarise(latencies, errors, elapsed, units) {
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, units, rate: latencies.length / elapsed, unitRate: units / elapsed, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), errors };
}

/**
 * Closed loop: `concurrency` workers, each sending its next request when the last one answered.
 * `request(worker, i)` answers true (one unit done), false (an error), or a number of units done
 * (a batch).
 */
export async function closedLoop({ seconds, concurrency }, request) {
  const latencies = [];
  let errors = 0;
  let units = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const t0 = performance.now();
        const done = await request(worker, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (done === false) errors++;
        else units += done === true ? 1 : done;
      }
    }),
  );
  return summarise(latencies, errors, (performance.now() - started) / 1000, units);
}

/** Open loop: requests start at a fixed rate whatever the answers, so queueing shows in the latency. */
export async function openLoop({ seconds, concurrency }, rate, request) {
  const latencies = [];
  let errors = 0;
  let units = 0;
  const total = Math.max(1, Math.round(rate * seconds));
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      (async () => {
        const t0 = performance.now();
        const done = await request(i % concurrency, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (done === false) errors++;
        else units += done === true ? 1 : done;
      })(),
    );
  }
  await Promise.all(inFlight);
  return summarise(latencies, errors, (performance.now() - started) / 1000, units);
}

export const ms = (v) => `${v.toFixed(1)} ms`;

export function printPhase(name, r) {
  console.log(
    `${name.padEnd(38)} ${String(r.count).padStart(7)}  ${r.rate.toFixed(0).padStart(6)} /s  p50 ${ms(r.p50).padStart(9)}  p90 ${ms(r.p90).padStart(9)}  p99 ${ms(r.p99).padStart(9)}  errors ${r.errors}`,
  );
}

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

/** CPU milliseconds used so far by each process of the stack's groups, and by this client. */
export function cpuByGroup(stack) {
  const table = processTable();
  const groups = {};
  for (const [name, pids] of Object.entries(stack.processGroups(table))) groups[name] = new Map(pids.map((pid) => [pid, (table.get(pid)?.ticks ?? 0) * 10]));
  const own = process.cpuUsage();
  groups['bench client'] = new Map([[process.pid, (own.user + own.system) / 1000]]);
  return groups;
}

/** CPU milliseconds each group used between two readings, process by process (exited ones left out). */
export function cpuBetween(before, after) {
  return Object.fromEntries(Object.entries(after).map(([group, pids]) => [group, [...pids].reduce((sum, [pid, ms]) => sum + ms - (before[group]?.get(pid) ?? 0), 0)]));
}

async function ensureDatabase(adminUrl, name) {
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  const found = await pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount === 0) await pool.query(`CREATE DATABASE "${name}"`);
  await pool.end();
}

/** `npm start` in a fresh data directory: one Node.js process, an embedded durable PostgreSQL. */
export async function startSingleProcess({ profileArgs = [] } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'recur-bench-'));
  chmodSync(dataDir, 0o755);
  const port = 18080 + Math.floor(Math.random() * 1000);
  const pgPort = port + 1000;
  const child = spawn(process.execPath, [...profileArgs, 'tools/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: dataDir, PORT: String(port), RECUR_PG_PORT: String(pgPort), METRICS_PORT: String(port + 2000), RECUR_GRPC_BASE_PORT: String(port + 3000), LOG_LEVEL: 'warn', KAFKA_BROKERS: '' },
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
    description: '`npm start`: all seven apps in one Node.js process, in-process event bus',
    url: `http://127.0.0.1:${port}`,
    key,
    urlFor,
    ensureDatabase: (name) => ensureDatabase(urlFor('postgres'), name),
    processGroups: (table) => ({ 'node (all 7 apps)': [child.pid], postgresql: withDescendants(table, [child.pid]).filter((pid) => table.get(pid).comm === 'postgres') }),
    async stop() {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** A keep-alive JSON client of `/v1` with the stack's key. */
export function v1Client(stack, sockets) {
  const target = new URL(stack.url);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const call = (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        { agent, host: target.hostname, port: target.port, method, path, headers: { 'x-api-key': stack.key, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}
