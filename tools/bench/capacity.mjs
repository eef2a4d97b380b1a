#!/usr/bin/env node
// The capacity table: requests a second per core of each app, of PostgreSQL and of the Kafka
// broker, for each kind of `/v1` work and for their mix, from the CPU time each process spends
// (/proc/<pid>/stat, as every bench reads it) with every app its own process and events through
// Kafka, as Kubernetes runs them; and each process's peak memory. CPU time per request holds on a
// shared machine where wall-clock rates do not.
//
//   npm run bench:capacity                  # writes helm/recur/capacity.json, the table in
//                                           # docs/operations/capacity.md, and the chart's requests
//   BENCH_SECONDS=2 CAPACITY_WRITE=0 npm run bench:capacity   # the short form: prints only
//
// Options (environment): BENCH_SECONDS (10 per kind of work, twice that for the mix), BENCH_CONCURRENCY
// (16), CAPACITY_WRITE (1: write the files; 0: print only), CAPACITY_JSON and CAPACITY_DOC (other
// files to write, e.g. for a test), BENCH_PROFILE=<dir> (a CPU profile of every app, summarised per kind
// of work at the end; profiling slows the apps, so nothing is written). The broker is always one of the
// bench's own (its CPU is measured).
//
// Each kind of work runs as a closed loop of BENCH_CONCURRENCY clients (workload.mjs), then the mix.
// A process's CPU per request is what it spent in the phase above what it spends at rest (measured
// before the phases and after them, with no requests), over the phase's requests; its requests a second per core are what
// one core holds after its time at rest: (1000 ms − rest ms) / CPU ms per request.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { CAPACITY_FILE, VALUES_FILE, writeChartValues } from '../helm/capacity-values.mjs';
import { DOC_END, DOC_START, renderTables } from './capacity-table.mjs';
import { closedLoop, cpuBetween, cpuByGroup, loadAverage, memoryByProcess, phases, processTable, startProcesses, summariseProfiles } from './harness.mjs';
import { KINDS, MIX, prepareWorkload } from './workload.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined;
const WRITE = process.env.CAPACITY_WRITE !== '0' && !PROFILE_DIR;
const JSON_FILE = process.env.CAPACITY_JSON ?? CAPACITY_FILE;
const DOC_FILE = process.env.CAPACITY_DOC ?? join(ROOT, 'docs', 'operations', 'capacity.md');
const REST_SECONDS = 5;
/** The longest wait for the stack to be back at rest after a phase. */
const DRAIN_LIMIT_MS = 20_000;

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });

const startedAt = Date.now();
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const stack = await startProcesses({
  name: 'capacity',
  scaled: 'subscription',
  ownBroker: true,
  profileDir: PROFILE_DIR,
  // Every request is served and counted (admission control is measured by bench:overload);
  // invoices send no e-mail (rendering PDFs is not the work measured here).
  appEnv: { gateway: { ADMISSION_MAX_IN_FLIGHT: '0' }, invoicing: { INVOICE_MAIL_ON_FINALIZE: 'false' } },
});
console.log(`\nRecur capacity (${stack.description}; the broker the bench's own)`);
console.log(`${CONCURRENCY} concurrent clients, ${SECONDS} s per kind of work; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
const loadBefore = loadAverage();
console.log(`load average before: ${loadBefore} on ${availableParallelism()} cores\n`);

const workload = await prepareWorkload(stack, { connections: CONCURRENCY * 2 });
// Warm-up (JIT, pools, channels, every kind of request).
await closedLoop({ seconds: Math.min(3, SECONDS), concurrency: CONCURRENCY }, workload.mix);

// Peak memory per process: each app's RSS, PostgreSQL's backends as their summed PSS, the broker's RSS.
const peakMiB = {};
const sampleMemory = () => {
  const memory = memoryByProcess(stack);
  const table = processTable();
  const brokerPids = stack.processGroups(table).kafka ?? [];
  memory.kafka = brokerPids.reduce((sum, pid) => sum + (table.get(pid)?.rssKiB ?? 0), 0) / 1024;
  for (const [group, mib] of Object.entries(memory)) peakMiB[group] = Math.max(peakMiB[group] ?? 0, mib);
};
sampleMemory();
const memoryTimer = setInterval(sampleMemory, 1_000);

// What each process spends doing nothing (timers, polls, fetches): left out of its CPU per request.
// First the warm-up's events are left to be consumed.
await new Promise((resolve) => setTimeout(resolve, 3_000));
// Measured before the phases and again after them: their mean is what is left out, so a machine
// whose load drifts through the run weighs on it less.
async function atRest() {
  const before = cpuByGroup(stack);
  await new Promise((resolve) => setTimeout(resolve, REST_SECONDS * 1_000));
  return Object.fromEntries(Object.entries(cpuBetween(before, cpuByGroup(stack))).map(([group, ms]) => [group, ms / REST_SECONDS]));
}
const restFirst = await atRest();
const restMsPerSecond = { ...restFirst };

const restTotal = Object.entries(restMsPerSecond).filter(([group]) => group !== 'bench client').reduce((sum, [, ms]) => sum + ms, 0);
/**
 * Waits until the stack is back at rest: the events a phase's requests published are consumed
 * after its last answer (invoices raised, deliveries made), and that work is the phase's, not the
 * next one's. At rest: two readings 250 ms apart in a row under 1.5 × the CPU at rest + 20 ms/s.
 */
async function drained() {
  let quiet = 0;
  for (let waited = 0; quiet < 2 && waited < DRAIN_LIMIT_MS; waited += 250) {
    const before = cpuByGroup(stack);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const used = Object.entries(cpuBetween(before, cpuByGroup(stack))).filter(([group]) => group !== 'bench client').reduce((sum, [, ms]) => sum + ms, 0);
    quiet = used * 4 <= restTotal * 1.5 + 20 ? quiet + 1 : 0;
  }
}

const { results, cpuPer, run, windows } = phases(stack);
const loop = { seconds: SECONDS, concurrency: CONCURRENCY };
/** Each phase's measured time, its drain included (the CPU at rest over it is left out of its CPU per request). */
const windowSeconds = {};
const phase = (name, request, lengths = 1) => run(name, name === 'mix' ? `/v1 mix (${MIX})` : `/v1 ${name}`, async () => {
  const from = performance.now();
  const result = await closedLoop({ ...loop, seconds: loop.seconds * lengths }, request);
  await drained();
  windowSeconds[name] = (performance.now() - from) / 1000;
  return result;
});
for (const kind of KINDS) await phase(kind, workload.requests[kind]);
// The mix is what the chart's requests come from: twice as long, for as many requests behind it as the kinds'.
await phase('mix', workload.mix, 2);
clearInterval(memoryTimer);
sampleMemory();
const restLast = await atRest();
for (const group of Object.keys(restMsPerSecond)) restMsPerSecond[group] = (restFirst[group] + (restLast[group] ?? restFirst[group])) / 2;
console.log(`CPU at rest (ms per s), before the phases → after: ${Object.keys(restFirst).filter((g) => g !== 'bench client').map((g) => `${g} ${restFirst[g].toFixed(0)} → ${restLast[g].toFixed(0)}`).join(', ')}`);
const loadAfter = loadAverage();

const WORKS = [...KINDS, 'mix'];
const failed = WORKS.filter((work) => results[work].errors > results[work].count / 100);
/** CPU µs per request above the process's rest: its gross CPU in the phase less its rest rate over the phase's time. */
const marginalUs = (group, work) => {
  const r = results[work];
  const grossUs = cpuPer[work][group] * Math.max(1, r.count);
  return Math.max(0, (grossUs - restMsPerSecond[group] * 1000 * windowSeconds[work]) / Math.max(1, r.count));
};
const groups = Object.keys(cpuPer.mix).filter((group) => group !== 'bench client');
const capacity = {
  measured: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  command: 'npm run bench:capacity',
  machine: { cores: availableParallelism(), loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
  workload: { kinds: KINDS, mix: MIX, secondsPerKind: SECONDS, concurrency: CONCURRENCY },
  rates: Object.fromEntries(WORKS.map((work) => [work, { requestsPerSecond: round(results[work].rate, 1), p99Ms: round(results[work].p99, 1), errors: results[work].errors }])),
  processes: Object.fromEntries(groups.map((group) => [group, {
    restMsPerSecond: round(restMsPerSecond[group], 1),
    peakRssMiB: Math.round(peakMiB[group] ?? 0),
    cpuUsPerRequest: Object.fromEntries(WORKS.map((work) => [work, Math.round(marginalUs(group, work))])),
  }])),
};

function round(value, digits) {
  return Number(value.toFixed(digits));
}

const tables = renderTables(capacity);
console.log(`\n${tables}\n`);
if (failed.length > 0) console.log(`more than 1 % of the requests failed in: ${failed.join(', ')} — the figures of those phases are suspect`);

workload.close();
await stack.stop();
if (PROFILE_DIR) {
  for (const work of WORKS) {
    console.log(`\n== CPU profiles of the apps during /v1 ${work}`);
    summariseProfiles(PROFILE_DIR, windows[work]);
  }
}

if (WRITE) {
  writeFileSync(JSON_FILE, `${JSON.stringify(capacity, null, 2)}\n`);
  const doc = readFileSync(DOC_FILE, 'utf8');
  const [before, rest] = doc.split(DOC_START);
  if (rest === undefined || !rest.includes(DOC_END)) throw new Error(`${DOC_FILE} lacks the lines ${DOC_START} … ${DOC_END}`);
  writeFileSync(DOC_FILE, `${before}${DOC_START}\n\n${tables}\n\n${DOC_END}${rest.split(DOC_END)[1]}`);
  console.log(`wrote ${JSON_FILE} and the table in ${DOC_FILE}`);
  if (JSON_FILE === CAPACITY_FILE) {
    // The chart's requests follow, and the manifests rendered from the chart (deploy/k8s).
    writeFileSync(VALUES_FILE, writeChartValues(readFileSync(VALUES_FILE, 'utf8'), capacity));
    execFileSync(join(ROOT, 'tools', 'helm', 'render-manifests.sh'), { cwd: ROOT, stdio: 'inherit' });
    console.log('set helm/recur/values.yaml\'s requests and HPA targets from it, and rendered deploy/k8s');
  }
}
process.exit(failed.length > 0 ? 1 : 0);
