// What every benchmark (tools/bench/*.mjs) measures with: closed and open loops with percentiles,
// one line per phase, latency summaries, CPU time per process from /proc, a keep-alive HTTP client
// of `/v1`, and the stacks under test: `npm start` in a fresh data directory, or PostgreSQL and
// Kafka for benches that run each app as its own process (@recur/testing's startApp).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { mailDir, postgresDataDir } from '../local-data.mjs';

const require = createRequire(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Loops and percentiles

/** The value at percentile `p` of an ascending array. */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** `spans`: each request's [start, end] (performance.now()), in the order they ended. */
function summarise(latencies, errors, elapsed, units, spans) {
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, units, elapsed, latencies, spans, rate: latencies.length / elapsed, unitRate: units / elapsed, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), errors };
}

/** How far apart the request numbers of an alternated phase's slices start (closedLoop `firstIndex`). */
const SLICE_INDEX_SPAN = 100_000_000;

/** One result of several loops' results (the slices of an alternated phase): their requests, time and latencies together. */
function mergeResults(slices) {
  const sum = (key) => slices.reduce((total, slice) => total + slice[key], 0);
  return summarise(slices.flatMap((slice) => slice.latencies), sum('errors'), sum('elapsed'), sum('units'), slices.flatMap((slice) => slice.spans));
}

/** Times one request; `request(worker, i)` answers true (one unit done), false or a throw (an error), or a number of units done (a batch). */
async function timed(tally, request, worker, i) {
  const t0 = performance.now();
  const done = await request(worker, i).catch(() => false);
  const t1 = performance.now();
  tally.latencies.push(t1 - t0);
  tally.spans.push([t0, t1]);
  if (done === false) tally.errors++;
  else tally.units += done === true ? 1 : done;
}

/**
 * Closed loop: `concurrency` workers, each sending its next request when the last one answered.
 * A worker's requests are numbered from `firstIndex` (0): the slices of an alternated phase
 * number on, so requests that derive keys from `(worker, i)` never repeat one.
 */
export async function closedLoop({ seconds, concurrency, firstIndex = 0 }, request) {
  const tally = { latencies: [], spans: [], errors: 0, units: 0 };
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = firstIndex; Date.now() < deadline; i++) await timed(tally, request, worker, i);
    }),
  );
  return summarise(tally.latencies, tally.errors, (performance.now() - started) / 1000, tally.units, tally.spans);
}

/**
 * Open loop: requests start at a fixed rate whatever the answers, so queueing shows in the latency.
 * Requests are numbered from `firstIndex`, as closedLoop's.
 */
export async function openLoop({ seconds, concurrency, firstIndex = 0 }, rate, request) {
  const tally = { latencies: [], spans: [], errors: 0, units: 0 };
  const total = Math.max(1, Math.round(rate * seconds));
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(timed(tally, request, i % concurrency, firstIndex + i));
  }
  await Promise.all(inFlight);
  return summarise(tally.latencies, tally.errors, (performance.now() - started) / 1000, tally.units, tally.spans);
}

export const ms = (v) => `${v.toFixed(1)} ms`;

// ---------------------------------------------------------------------------------------------
// The disk's stalls

/** A disk stall: this long or longer with I/O in flight and none completed (idle, an fdatasync takes 0.2–0.5 ms here). */
const STALL_MS = 20;
/** How often the watcher reads /proc/diskstats. */
const DISK_SAMPLE_MS = 5;

/**
 * Watches the block device that holds `path` for stalls: spans of STALL_MS or more in which I/O was
 * in flight and none completed. This machine's virtual disk stops completing I/O for 20–300 ms a
 * few times a minute under load (an fdatasync every 3 ms, idle otherwise: p99 0.5 ms; flat out:
 * stalls of 24–221 ms, each one of these), and every commit waiting for its WAL flush waits with it,
 * the raw SQL's as much as `/v1`'s: a phase's p99 then says when the stalls fell more than what the
 * stack does. The watcher's reads cost the bench process ~1 % of a core, in every phase alike.
 * `stalls()` answers them as [start, end] on performance.now()'s clock; undefined where
 * /proc/diskstats does not list the device.
 */
export function watchDiskStalls(path) {
  const dev = statSync(path).dev;
  const [major, minor] = [(dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00)];
  const read = () => {
    const line = readFileSync('/proc/diskstats', 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).find((f) => Number(f[0]) === major && Number(f[1]) === minor);
    // Fields: reads completed (3), writes completed (7), I/Os in flight (11).
    return line && { completed: Number(line[3]) + Number(line[7]), inFlight: Number(line[11]) };
  };
  if (!read()) return undefined;
  const stalls = [];
  let last = { ...read(), at: performance.now() };
  let since; // when completions stopped with I/O in flight
  const timer = setInterval(() => {
    const now = { ...read(), at: performance.now() };
    if (now.completed === last.completed && now.inFlight > 0) since ??= last.at;
    else if (since !== undefined) {
      if (last.at - since >= STALL_MS) stalls.push([since, now.at]);
      since = undefined;
    }
    last = now;
  }, DISK_SAMPLE_MS);
  timer.unref();
  return { stalls: () => [...stalls, ...(since !== undefined && last.at - since >= STALL_MS ? [[since, last.at]] : [])], stop: () => clearInterval(timer) };
}

/**
 * The stalls (watchDiskStalls) that overlapped a loop's requests, and the loop's p99 without the
 * requests that overlapped one: what the stack gives where the disk did not stop.
 */
export function outsideDiskStalls(result, stalls) {
  const overlaps = (span) => stalls.some(([from, to]) => span[0] < to && span[1] > from);
  const within = stalls.filter(([from, to]) => result.spans.some((span) => span[0] < to && span[1] > from));
  const outside = result.spans.filter((span) => !overlaps(span)).map(([from, to]) => to - from).sort((a, b) => a - b);
  return { stalls: within.length, stalledMs: within.reduce((total, [from, to]) => total + to - from, 0), leftOut: result.spans.length - outside.length, p99: percentile(outside, 99) };
}

/** One line for a loop's result: count, rate, p50/p90/p99, errors. */
export function printPhase(name, r) {
  console.log(
    `${name.padEnd(38)} ${String(r.count).padStart(7)}  ${r.rate.toFixed(0).padStart(6)} /s  p50 ${ms(r.p50).padStart(9)}  p90 ${ms(r.p90).padStart(9)}  p99 ${ms(r.p99).padStart(9)}  errors ${r.errors}`,
  );
}

/**
 * Phases of a benchmark on a stack: `run(name, label, work)` runs a loop (`work()`), prints its
 * line and keeps its result in `results[name]` and the CPU microseconds each process group used
 * per request (`per: 'count'`) or per unit of work (`per: 'units'`, batches) in `cpuPer[name]`.
 * `alternate(loop, rounds, works)` runs several loops in turns instead (see there); `windows[name]`
 * holds each phase's spans on the monotonic clock, for a profile of that phase alone. A stack with a
 * `dataDir` has its disk watched (watchDiskStalls): a phase that met a stall says so, with its p99
 * outside the stalls (`results[name].outsideDiskStalls`).
 */
export function phases(stack, { per = 'count', counters = {} } = {}) {
  const disk = stack.dataDir ? watchDiskStalls(stack.dataDir) : undefined;
  const results = {};
  const cpuPer = {};
  const windows = {};
  /** Runs one loop (or slice), adding its CPU, GC, counters and span to `name`'s tallies. */
  const measured = async (name, tallies, work) => {
    const gcBefore = await gcPauses(stack);
    const countersBefore = await readCounters(counters);
    const before = cpuByGroup(stack);
    const from = monotonicMicros();
    const result = await work();
    (windows[name] ??= []).push([from, monotonicMicros()]);
    for (const [group, ms] of Object.entries(cpuBetween(before, cpuByGroup(stack)))) tallies.cpu[group] = (tallies.cpu[group] ?? 0) + ms;
    for (const [counter, value] of Object.entries(await readCounters(counters))) tallies.counters[counter] = (tallies.counters[counter] ?? 0) + value - countersBefore[counter];
    if (gcBefore) tallies.gc.push(gcDelta(gcBefore, await gcPauses(stack)));
    return result;
  };
  const report = (name, label, result, tallies) => {
    results[name] = result;
    printPhase(label, result);
    if (tallies.gc.length > 0) console.log(`${''.padEnd(38)} ${describeGc(tallies.gc)}`);
    if (disk) {
      const outside = (result.outsideDiskStalls = outsideDiskStalls(result, disk.stalls()));
      if (outside.stalls > 0) {
        console.log(`${''.padEnd(38)} disk stalls: ${outside.stalls} (${outside.stalledMs.toFixed(0)} ms in all); p99 outside them ${ms(outside.p99)} (${outside.leftOut} requests overlapped one)`);
      }
    }
    const counted = Object.entries(tallies.counters).map(([counter, total]) => `${counter} ${(total / Math.max(1, result[per])).toFixed(2)}`);
    if (counted.length > 0) console.log(`${''.padEnd(38)} per request: ${counted.join(', ')}`);
    cpuPer[name] = Object.fromEntries(Object.entries(tallies.cpu).map(([group, ms]) => [group, (ms * 1000) / Math.max(1, result[per])]));
  };
  return {
    results,
    cpuPer,
    windows,
    async run(name, label, work) {
      const tallies = { cpu: {}, gc: [], counters: {} };
      report(name, label, await measured(name, tallies, work), tallies);
    },
    /**
     * Runs `works` (`[name, label, work]`, `work(slice)` a closed or open loop of `slice`) in turns:
     * `rounds` rounds, each giving every work a slice of `loop.seconds / rounds`; each work's
     * line and result merge its slices. The speed of this machine drifts by a fifth between
     * phases of one run (its neighbours, the host), so a ratio of two works measured side by side
     * in turns is steadier than one of two phases measured one after the other.
     */
    async alternate(loop, rounds, works) {
      const tallies = Object.fromEntries(works.map(([name]) => [name, { cpu: {}, gc: [], counters: {}, slices: [] }]));
      for (let round = 0; round < rounds; round++) {
        const slice = { ...loop, seconds: loop.seconds / rounds, firstIndex: round * SLICE_INDEX_SPAN };
        for (const [name, , work] of works) tallies[name].slices.push(await measured(name, tallies[name], () => work(slice)));
      }
      for (const [name, label] of works) report(name, label, mergeResults(tallies[name].slices), tallies[name]);
    },
    /** CPU of all parties per request or unit (NaN for a phase not run): a ratio of two is what the machine would give were CPU its only limit. */
    cpuCost: (name) => (cpuPer[name] ? Object.values(cpuPer[name]).reduce((sum, us) => sum + us, 0) : NaN),
    /** A table of CPU per request or unit, a column per process group, a row per `[name, label]` of a phase that ran. */
    printCpuTable(rows) {
      const groups = Object.keys(Object.values(cpuPer)[0]);
      console.log(`| phase | ${groups.join(' | ')} |`);
      console.log(`|---|${groups.map(() => '---').join('|')}|`);
      for (const [name, label] of rows.filter(([name]) => cpuPer[name])) console.log(`| ${label} | ${groups.map((group) => cpuPer[name][group].toFixed(0)).join(' | ')} |`);
    },
  };
}

/** Every counter's reading (`counters`: name → async reader of a running total). */
async function readCounters(counters) {
  return Object.fromEntries(await Promise.all(Object.entries(counters).map(async ([name, read]) => [name, await read()])));
}

/**
 * The cluster's WAL flushes (fsyncs) so far, from `pg_stat_io` (PostgreSQL 16+), through `pool`: a
 * phase's count over its requests is what each costs the disk, whichever database committed.
 */
export async function walSyncs(pool) {
  await pool.query('SELECT pg_stat_clear_snapshot()');
  return Number((await pool.query("SELECT coalesce(sum(fsyncs), 0)::bigint AS fsyncs FROM pg_stat_io WHERE object = 'wal'")).rows[0].fsyncs);
}

/**
 * The stack's garbage-collection pauses so far, from its Prometheus endpoint (prom-client's
 * `nodejs_gc_duration_seconds`): per kind, count, total seconds and how many took 10 ms or more;
 * and the event loop's delay (p99, max) since the previous reading.
 * Undefined for a stack without one metrics endpoint (processes mode).
 */
async function gcPauses(stack) {
  if (!stack.metricsUrl) return undefined;
  const text = await (await fetch(stack.metricsUrl)).text();
  const pauses = {};
  const series = Array.from(text.matchAll(/^nodejs_gc_duration_seconds_(sum|count|bucket)\{(?:le="([^"]+)",)?kind="(\w+)"\} (\S+)$/gm), ([, part, le, kind, value]) => ({ part, le, kind, value: Number(value) }));
  for (const { part, le, kind, value } of series) {
    pauses[kind] ??= { count: 0, seconds: 0, under10ms: 0 };
    if (part === 'count') pauses[kind].count = value;
    if (part === 'sum') pauses[kind].seconds = value;
    if (part === 'bucket' && le === '0.01') pauses[kind].under10ms = value;
  }
  // The event loop's delay since the previous scrape (prom-client resets its histogram on each).
  const lag = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { pauses, loopDelayMaxMs: lag('nodejs_eventloop_lag_max_seconds'), loopDelayP99Ms: lag('nodejs_eventloop_lag_p99_seconds') };
}

/** What happened between two readings of gcPauses: per kind, pauses, seconds and pauses of 10 ms or more; the loop's delay. */
function gcDelta({ pauses: before }, { pauses: after, loopDelayMaxMs, loopDelayP99Ms }) {
  const kinds = Object.fromEntries(Object.entries(after).map(([kind, now]) => {
    const then = before[kind] ?? { count: 0, seconds: 0, under10ms: 0 };
    const count = now.count - then.count;
    return [kind, { count, seconds: now.seconds - then.seconds, long: count - (now.under10ms - then.under10ms) }];
  }));
  return { kinds, loopDelayMaxMs, loopDelayP99Ms };
}

/** `GC pauses: 120 minor (310 ms, 2 ≥ 10 ms), 1 major (…); event loop delay p99 …, max …` of a phase's readings (the worst slice's delay). */
function describeGc(deltas) {
  const totals = {};
  for (const { kinds } of deltas) {
    for (const [kind, { count, seconds, long }] of Object.entries(kinds)) {
      totals[kind] ??= { count: 0, seconds: 0, long: 0 };
      totals[kind].count += count;
      totals[kind].seconds += seconds;
      totals[kind].long += long;
    }
  }
  const parts = Object.entries(totals).filter(([, t]) => t.count > 0).map(([kind, t]) => `${t.count} ${kind} (${(t.seconds * 1000).toFixed(0)} ms, ${t.long} ≥ 10 ms)`);
  const worst = (key) => Math.max(...deltas.map((delta) => delta[key]));
  return `GC pauses: ${parts.join(', ') || 'none'}; event loop delay p99 ${worst('loopDelayP99Ms').toFixed(1)} ms, max ${worst('loopDelayMaxMs').toFixed(1)} ms`;
}

/** `p50 … ms  p90 … ms  p99 … ms` (and `max … ms`) of whole-millisecond latencies measured outside a loop. */
export function latencySummary(values, { max = false } = {}) {
  const sorted = [...values].sort((a, b) => a - b);
  const line = `p50 ${percentile(sorted, 50)} ms  p90 ${percentile(sorted, 90)} ms  p99 ${percentile(sorted, 99)} ms`;
  return max ? `${line}  max ${sorted[sorted.length - 1]} ms` : line;
}

// ---------------------------------------------------------------------------------------------
// CPU and memory per process, from /proc

/** Every process: parent, command name, CPU time (user + system, clock ticks), resident memory (kB). */
export function processTable() {
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
export function withDescendants(table, rootPids) {
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

/** Processes named `comm` (e.g. `postgres`, `java`) under a root process. */
export const descendantsNamed = (table, rootPid, comm) => withDescendants(table, [rootPid]).filter((pid) => table.get(pid).comm === comm);

/** Resident memory of the processes and their descendants, MiB. */
export function treeRssMiB(rootPids) {
  const table = processTable();
  return withDescendants(table, rootPids).reduce((sum, pid) => sum + table.get(pid).rssKiB, 0) / 1024;
}

/**
 * Memory of each process of the stack's groups (`processGroups`), MiB: a group of one process its
 * RSS; a group of several (PostgreSQL's backends) the sum of their PSS (/proc/<pid>/smaps_rollup),
 * which counts their shared buffers once rather than once per backend.
 */
export function memoryByProcess(stack) {
  const table = processTable();
  const pss = (pid) => {
    try {
      return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]);
    } catch {
      return table.get(pid)?.rssKiB ?? 0;
    }
  };
  const memory = {};
  for (const [group, pids] of Object.entries((stack.memoryGroups ?? stack.processGroups)(table))) {
    if (pids.length === 1) memory[group] = (table.get(pids[0])?.rssKiB ?? 0) / 1024;
    else memory[group] = pids.reduce((sum, pid) => sum + pss(pid), 0) / 1024;
  }
  return memory;
}

/** The 1, 5 and 15 minute load averages, as /proc/loadavg gives them. */
export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** CPU milliseconds (user + system) one process has used so far; 0 once it is gone. */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU milliseconds used so far by each process of each group of the stack (`processGroups(table)`), and by this client. */
export function cpuByGroup(stack) {
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
export function cpuBetween(before, after) {
  return Object.fromEntries(Object.entries(after).map(([group, pids]) => [group, [...pids].reduce((sum, [pid, ms]) => sum + ms - (before[group]?.get(pid) ?? 0), 0)]));
}

// ---------------------------------------------------------------------------------------------
// The stacks under test

/** Node.js options writing a CPU profile named `name` into `dir`; none without a `dir`. */
export const profileArgs = (dir, name) => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`] : []);

/** Summarises the CPU profiles in `dir` by package (profile-summary.mjs); `windows` (`[from, to]` spans in monotonic µs, `monotonicMicros()`) keep one phase. */
export function summariseProfiles(dir, windows = undefined) {
  const profiles = readdirSync(dir).filter((file) => file.endsWith('.cpuprofile')).map((file) => join(dir, file));
  execFileSync(process.execPath, [join(ROOT, 'tools', 'bench', 'profile-summary.mjs'), ...profiles, ...(windows ? ['--window', windows.map((span) => span.join('-')).join(',')] : [])], { stdio: 'inherit' });
}

/** The monotonic clock in microseconds, as V8 stamps profile samples. */
export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

/** A fresh temporary directory others may read (the embedded PostgreSQL runs as another user). */
export function benchDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `recur-bench-${name}-`));
  chmodSync(dir, 0o755);
  // A run's clusters and broker logs take gigabytes (1.9 GB for 100 000 renewals): gone when the
  // bench exits, however it exits, unless BENCH_KEEP_DATA=1 keeps them to look into.
  if (process.env.BENCH_KEEP_DATA !== '1') process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The Node.js flags `npm start` gives tools/start.mjs (package.json's script): a bench runs what a user runs. */
function npmStartNodeFlags() {
  const words = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('tools/start.mjs'));
}

/** The Node.js flags the images start each app with (deploy/Dockerfile's CMD, the chart's command): processes mode runs what Kubernetes runs. */
export function imageNodeFlags() {
  const cmd = readFileSync(join(ROOT, 'deploy', 'Dockerfile'), 'utf8').split('\n').find((line) => line.startsWith('CMD '));
  return /exec node ((?:--\S+ )*)/.exec(cmd)[1].split(' ').filter(Boolean);
}

/**
 * `npm start` in a fresh data directory on ports of its own: one Node.js process, an embedded
 * durable PostgreSQL, e-mail caught in `mailDir`. `env` adds to the process's environment;
 * `stderr: 'ignore'` hides the catcher's line per mail.
 */
export async function startSingleProcess({ profileArgs = [], env = {}, stderr = 'inherit' } = {}) {
  const dataDir = benchDir('npm-start');
  // BENCH_PORT: the stack's ports from there on (its HTTP port, PostgreSQL +1, admin +2, mail +3,
  // gRPC +10 to +15), for a machine whose ports are shared out; otherwise a random one of 18080–19079, and +1000 to +4000.
  const base = process.env.BENCH_PORT ? Number(process.env.BENCH_PORT) : undefined;
  const port = base ?? 18080 + Math.floor(Math.random() * 1000);
  const ports = base ? { pg: base + 1, admin: base + 2, smtp: base + 3, grpc: base + 10 } : { pg: port + 1000, admin: port + 2000, smtp: port + 4000, grpc: port + 3000 };
  const operatorToken = env.RECUR_OPERATOR_TOKEN ?? randomBytes(16).toString('hex');
  const pgPort = ports.pg;
  const child = spawn(process.execPath, [...npmStartNodeFlags(), ...profileArgs, 'tools/start.mjs'], {
    cwd: ROOT,
    env: {
      ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: dataDir, PORT: String(port), RECUR_PG_PORT: String(pgPort), ADMIN_PORT: String(ports.admin),
      RECUR_GRPC_BASE_PORT: String(ports.grpc), RECUR_SMTP_PORT: String(ports.smtp), LOG_LEVEL: 'warn', KAFKA_BROKERS: '', SMTP_URL: '',
      // The benches drive hundreds of requests a second with npm start's one key: they measure the
      // stack, not the per-key rate limits (docs/api/conventions.md, Rate limits), so its defaults are raised here.
      RATE_LIMIT_SANDBOX_PER_SECOND: String(BENCH_RATE_LIMIT_PER_SECOND), RATE_LIMIT_LIVE_PER_SECOND: String(BENCH_RATE_LIMIT_PER_SECOND), RECUR_OPERATOR_TOKEN: operatorToken, ...env,
    },
    stdio: ['ignore', 'pipe', stderr],
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
  // The stack's own URLs (its cluster's Unix socket), so the raw side talks to it the same way.
  const { embeddedPostgresUrl } = require('@recur/local-infra');
  const urlFor = (database) => embeddedPostgresUrl(postgresDataDir(dataDir), pgPort, database);
  return {
    description: '`npm start`: all seven apps in one Node.js process, in-process event bus',
    dataDir,
    url: `http://127.0.0.1:${port}`,
    key,
    urlFor,
    mailDir: mailDir(dataDir),
    ensureDatabase: (name) => ensureDatabase(urlFor('postgres'), name),
    metricsUrl: `http://127.0.0.1:${ports.admin}/metrics`,
    adminUrl: `http://127.0.0.1:${ports.admin}`,
    operatorToken,
    pids: () => [child.pid],
    processGroups: (table) => ({ 'node (all 7 apps)': [child.pid], postgresql: descendantsNamed(table, child.pid, 'postgres') }),
    async stop() {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function ensureDatabase(adminUrl, name) {
  const { Pool } = require('pg');
  const pool = new Pool({ connectionString: adminUrl, max: 1 });
  const found = await pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount === 0) await pool.query(`CREATE DATABASE "${name}"`);
  await pool.end();
}

/**
 * An embedded PostgreSQL in `dir`, and Kafka: the broker KAFKA_BROKERS names, otherwise one
 * started here (always one started here with `ownBroker`: a bench that stops it must not stop a
 * broker others use). `kafka` is that started broker (undefined when an existing one is used).
 * The faults bench (faults.mjs) kills and restarts both on their ports and data folders:
 * `killPostgres()` is a kill -9 of the server's whole process group, `restartPostgres()` starts
 * it again on the same cluster; `stopKafka()` / `startKafka()` the same for the broker.
 */
export async function startInfrastructure(dir, { persistent = false, ownBroker = false } = {}) {
  const { startEmbeddedPostgres, startKafkaBroker } = require('@recur/local-infra');
  const postgresDir = join(dir, 'postgres');
  const kafkaDir = join(dir, 'kafka');
  const [postgres, kafka] = await Promise.all([
    startEmbeddedPostgres({ dataDir: postgresDir, persistent }),
    process.env.KAFKA_BROKERS && !ownBroker ? undefined : startKafkaBroker({ dataDir: kafkaDir }),
  ]);
  const brokers = kafka?.brokers ?? process.env.KAFKA_BROKERS;
  const infrastructure = {
    postgres,
    kafka,
    brokers,
    killPostgres() {
      // The postmaster's pid is its process group's (it runs detached): the server and every backend at once.
      const pid = Number.parseInt(readFileSync(join(postgresDir, 'postmaster.pid'), 'utf8'), 10);
      process.kill(-pid, 'SIGKILL');
    },
    async restartPostgres() {
      infrastructure.postgres = await startEmbeddedPostgres({ dataDir: postgresDir, port: postgres.port, persistent });
    },
    async stopKafka() {
      await infrastructure.kafka.stop();
    },
    async startKafka() {
      infrastructure.kafka = await startKafkaBroker({ dataDir: kafkaDir, port: Number(brokers.split(':').pop()) });
    },
    async stop() {
      await infrastructure.kafka?.stop();
      await infrastructure.postgres.stop();
    },
  };
  return infrastructure;
}

/** What apps started with @recur/testing's startApp warned about (a failed batch, a retried request): a slow run says why here. */
export function printWarnings(apps) {
  for (const app of apps) {
    const warnings = app.output().split('\n').filter((line) => /warn|error/i.test(line) && !line.includes('kafka'));
    if (warnings.length > 0) console.log(`  ${app.app}: ${warnings.length} warnings, e.g. ${warnings.slice(0, 3).map((line) => line.slice(0, 300)).join('\n    ')}`);
  }
}

/** The gRPC services, in start order, and their databases' names (as `npm start` names them). */
export const SERVICES = ['catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'];
export const databaseName = (app) => `recur_${app.replace(/-/g, '_')}`;

/**
 * Accepts TCP connections and hands each to the next backend in turn, as a Kubernetes Service
 * (kube-proxy) does: HTTP keep-alive connections and gRPC channels are balanced per connection.
 * Also with one backend, so one and two replicas pay the same hop. `backends` (ports) is read at
 * each connection: changing the array in place moves new connections (a rolling upgrade's endpoints).
 */
export function startBalancer(backends) {
  let next = 0;
  const server = createServer((client) => {
    const upstream = createConnection(backends[next++ % backends.length], '127.0.0.1');
    // Without, Nagle's algorithm holds small writes for the peer's delayed ACK: ~40 ms a gRPC call.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, close: () => server.close() })));
}

/**
 * Every app as its own process (as Kubernetes runs them) on one durable embedded PostgreSQL,
 * events through Kafka; `replicas` gateways and `replicas` processes of the `scaled` service,
 * each set behind a balancer. `profileDir`: CPU profiles of every app process.
 * `appEnv`: extra environment per app. `ownBroker`: a broker of its own even where KAFKA_BROKERS
 * names one (startInfrastructure). `proxied`: a hop to put between two parties, e.g. a
 * Toxiproxy (faults.mjs): `{ gatewayTo: [service…], databaseOf: [service…], through(name,
 * upstream) }`, where `through` answers the `host:port` that forwards to `upstream` (`host:port`),
 * and the gateway then dials the named services, or the named services their database (over
 * TCP then, not the cluster's Unix socket), through it. The answer's `apps`, `infrastructure` and
 * `addresses` (each service's gRPC address) are what a bench that kills and restarts parts needs.
 */
export async function startProcesses({ name, scaled, replicas = 1, profileDir, appEnv = {}, ownBroker = false, proxied }) {
  const { startMailCatcher } = require('@recur/local-infra');
  const { freePort, startApp } = require('@recur/testing');
  const dataDir = benchDir(name);
  const infrastructure = await startInfrastructure(dataDir, { persistent: true, ownBroker });
  const { postgres, kafka, brokers } = infrastructure;
  const common = { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: `bench-${randomBytes(3).toString('hex')}`, METRICS_PORT: '0', GRPC_HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const mail = await startMailCatcher();
  const envOf = (app) => ({ ...(app === 'invoicing' ? { SMTP_URL: mail.url } : {}), ...appEnv[app] });
  const apps = [];
  const balancers = [];
  // Every address first: services call each other (subscription ↔ invoicing), and gRPC clients wait for their peer.
  const ports = {};
  const addresses = {};
  for (const service of SERVICES) {
    ports[service] = await Promise.all(Array.from({ length: service === scaled ? replicas : 1 }, () => freePort()));
    if (service === scaled) {
      const balancer = await startBalancer(ports[service]);
      balancers.push(balancer);
      addresses[service] = `127.0.0.1:${balancer.port}`;
    } else {
      addresses[service] = `127.0.0.1:${ports[service][0]}`;
    }
  }
  const peerVariable = (service) => `${service.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`;
  const peerAddresses = Object.fromEntries(SERVICES.map((service) => [peerVariable(service), addresses[service]]));
  const gatewayPeers = { ...peerAddresses };
  for (const service of proxied?.gatewayTo ?? []) gatewayPeers[peerVariable(service)] = await proxied.through(`gateway-to-${service}`, addresses[service]);
  /** A service's DATABASE_URL: the cluster's own, or over TCP through the hop `proxied` puts before it. */
  const databaseUrlOf = async (service) => {
    const url = postgres.urlFor(databaseName(service));
    if (!proxied?.databaseOf?.includes(service)) return url;
    const tcp = new URL(url);
    tcp.search = '';
    [tcp.hostname, tcp.port] = (await proxied.through(`${service}-to-postgresql`, `127.0.0.1:${postgres.port}`)).split(':');
    return tcp.toString();
  };
  for (const service of SERVICES) {
    await postgres.ensureDatabase(databaseName(service));
    const databaseUrl = await databaseUrlOf(service);
    for (const [replica, grpcPort] of ports[service].entries()) {
      apps.push(await startApp(service, {
        env: { ...common, ...peerAddresses, DATABASE_URL: databaseUrl, GRPC_PORT: String(grpcPort), ...envOf(service) },
        ready: { grpcPort },
        nodeArgs: [...imageNodeFlags(), ...profileArgs(profileDir, `${service}-${replica + 1}`)],
      }));
    }
  }
  await postgres.ensureDatabase(databaseName('gateway'));
  const operatorToken = randomBytes(16).toString('hex');
  const gatewayPorts = [];
  const adminPorts = [];
  for (let replica = 0; replica < replicas; replica++) {
    const httpPort = await freePort();
    const adminPort = await freePort();
    apps.push(await startApp('gateway', {
      env: {
        ...common,
        DATABASE_URL: postgres.urlFor(databaseName('gateway')),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        ADMIN_HOST: '127.0.0.1',
        ADMIN_PORT: String(adminPort),
        RECUR_OPERATOR_TOKEN: operatorToken,
        ...gatewayPeers,
        ...envOf('gateway'),
      },
      ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
      nodeArgs: [...imageNodeFlags(), ...profileArgs(profileDir, `gateway-${replica + 1}`)],
    }));
    gatewayPorts.push(httpPort);
    adminPorts.push(adminPort);
  }
  const front = await startBalancer(gatewayPorts);
  balancers.push(front);
  const url = `http://127.0.0.1:${front.port}`;
  const key = await operatorSandboxKey(`http://127.0.0.1:${adminPorts[0]}`, operatorToken);
  return {
    description: `every app its own process, events through Kafka; ${replicas} gateway and ${replicas} ${scaled} process(es), each set behind a per-connection TCP balancer`,
    dataDir,
    url,
    key,
    apps,
    infrastructure,
    addresses,
    adminUrl: `http://127.0.0.1:${adminPorts[0]}`,
    operatorToken,
    urlFor: postgres.urlFor,
    ensureDatabase: (database) => postgres.ensureDatabase(database),
    pids: () => apps.map((app) => app.pid),
    processGroups: (table) => ({
      // Each app apart (its replicas together): a CPU table then says which app spends what.
      ...Object.fromEntries(['gateway', ...SERVICES].map((name) => [name, apps.filter((app) => app.app === name).map((app) => app.pid)])),
      postgresql: descendantsNamed(table, process.pid, 'postgres'),
      ...(kafka ? { kafka: descendantsNamed(table, process.pid, 'java') } : {}),
    }),
    /** Each app process apart (memoryByProcess), PostgreSQL's backends together. */
    memoryGroups: (table) => ({
      ...Object.fromEntries(apps.map((app, index) => [apps.filter((other) => other.app === app.app).length > 1 ? `${app.app} ${index}` : app.app, [app.pid]])),
      postgresql: descendantsNamed(table, process.pid, 'postgres'),
    }),
    async stop() {
      for (const balancer of balancers) balancer.close();
      await Promise.all(apps.map((app) => app.kill('SIGTERM')));
      await infrastructure.stop();
      await mail.stop();
    },
  };
}

/** The per-key rate limit of the benches' keys: far above any rate they drive. */
const BENCH_RATE_LIMIT_PER_SECOND = 1_000_000;

/** A sandbox test key of a new account, made through the gateway's operator API (`adminUrl`: its admin listener), its app's rate limits raised out of the way. */
export async function operatorSandboxKey(adminUrl, operatorToken) {
  const operator = async (path, body) => {
    const response = await fetch(`${adminUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const account = await operator('/operator/accounts', { name: 'Bench' });
  await operator(`/operator/accounts/${account.id}/rate-limits`, { app: 'sandbox', read_per_second: BENCH_RATE_LIMIT_PER_SECOND, write_per_second: BENCH_RATE_LIMIT_PER_SECOND });
  return (await operator(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' })).secret;
}

/**
 * A keep-alive JSON client of `/v1` with the stack's key: `call(method, path, body)` answers status,
 * headers and the body's bytes. It runs on undici (Node's own fetch engine), not `node:http`'s
 * client, which spent 88 µs of the bench process's CPU per request against the raw phases' 59 µs
 * for `pg`: on 2 cores the load generator's CPU is taken from the stack under test.
 */
export function v1Client({ url, key }, maxSockets) {
  const { Pool: HttpPool } = require('undici');
  const pool = new HttpPool(url, { connections: maxSockets, pipelining: 1 });
  /** `headers` add to the key's (an Idempotency-Key, say); `timeoutMs` bounds the wait for the answer's headers and body (undici's default: 300 s). */
  const call = async (method, path, body, headers = {}, timeoutMs) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const timeouts = timeoutMs ? { headersTimeout: timeoutMs, bodyTimeout: timeoutMs } : {};
    const response = await pool.request({ method, path, headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers }, body: payload, ...timeouts });
    return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
  };
  return { call, close: () => pool.destroy() };
}
