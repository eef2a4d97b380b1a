#!/usr/bin/env node
// Customer create/retrieve throughput and latency through the gateway.
//
//   npm run bench                         # starts `npm start`'s stack in a temp dir, then measures it
//   RECUR_URL=http://host:8080 RECUR_KEY=recur_test_sk_… npm run bench   # measures a running Recur
//
// Options (environment): BENCH_SECONDS (10 per phase), BENCH_CONCURRENCY (16).
// Prints requests/s and p50/p90/p99 latency per phase; for a stack it started itself, also
// its time to ready and the resident memory of the whole process tree (Node + PostgreSQL).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, chmodSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function phase(name, request) {
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const t0 = performance.now();
        const ok = await request(worker, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const ms = (v) => `${v.toFixed(1)} ms`;
  console.log(
    `${name.padEnd(18)} ${String(latencies.length).padStart(7)} requests  ${(latencies.length / elapsed).toFixed(0).padStart(6)} req/s  ` +
      `p50 ${ms(percentile(latencies, 50))}  p90 ${ms(percentile(latencies, 90))}  p99 ${ms(percentile(latencies, 99))}  errors ${errors}`,
  );
}

/** Resident memory (MiB) of a process and all its descendants, from /proc. */
function treeRssMiB(rootPid) {
  const children = new Map();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch { /* exited */ }
  }
  let total = 0;
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop();
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      total += rss ? Number(rss[1]) : 0;
    } catch { /* exited */ }
    stack.push(...(children.get(pid) ?? []));
  }
  return total / 1024;
}

async function startStack() {
  execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
  const dataDir = mkdtempSync(join(tmpdir(), 'recur-bench-'));
  chmodSync(dataDir, 0o755);
  const port = 18080 + Math.floor(Math.random() * 1000);
  const started = Date.now();
  const child = spawn(process.execPath, ['tools/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: dataDir, PORT: String(port), RECUR_PG_PORT: String(port + 1000), METRICS_PORT: String(port + 2000), RECUR_GRPC_BASE_PORT: String(port + 3000), LOG_LEVEL: 'warn', KAFKA_BROKERS: '' },
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
  return { url: `http://127.0.0.1:${port}`, key, readySeconds: (Date.now() - started) / 1000, child };
}

const stack = process.env.RECUR_URL ? undefined : await startStack();
const url = process.env.RECUR_URL ?? stack.url;
const key = process.env.RECUR_KEY ?? stack.key;
const headers = { 'x-api-key': key, 'content-type': 'application/json' };

console.log(`\nRecur customer benchmark: ${url}, ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase`);
if (stack) console.log(`stack ready in ${stack.readySeconds.toFixed(1)} s (build already done); memory at rest ${treeRssMiB(stack.child.pid).toFixed(0)} MiB`);

const ids = [];
await phase('create customer', async (worker, i) => {
  const response = await fetch(`${url}/v1/customers`, { method: 'POST', headers, body: JSON.stringify({ name: `Bench ${worker}-${i}`, email: `bench${worker}.${i}@example.com` }) });
  const body = await response.json();
  if (response.status === 201) ids.push(body.id);
  return response.status === 201;
});
await phase('retrieve customer', async (worker, i) => {
  const response = await fetch(`${url}/v1/customers/${ids[(worker * 7919 + i) % ids.length]}`, { headers });
  await response.arrayBuffer();
  return response.status === 200;
});
if (stack) {
  console.log(`memory after load ${treeRssMiB(stack.child.pid).toFixed(0)} MiB (Node.js process with all seven apps + PostgreSQL)`);
  stack.child.kill('SIGINT');
  await new Promise((resolve) => stack.child.once('exit', resolve));
}
