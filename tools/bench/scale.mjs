#!/usr/bin/env node
// Scale-out: the gateway and the busiest service with one replica each, then two, every app its
// own process and events through Kafka, each replica set behind the per-connection TCP balancer
// the benches use for a Kubernetes Service (harness startBalancer, as bench:upgrade). Every
// gateway and service replica is pinned with taskset to cores of its own, the rest (the other
// apps, PostgreSQL, the broker, the load generator) to the cores left, so two replicas are
// measured on two replicas' cores. Prints requests a second and p99 of the mix (workload.mjs) for
// one and two replicas, and what limited each run: the process nearest to all of its cores busy.
//
//   npm run bench:scale
//   BENCH_SECONDS=3 npm run bench:scale        # the short form
//
// Options (environment): BENCH_SECONDS (10 per run), BENCH_CONCURRENCY (32 clients), BENCH_WORK
// (one kind of work of workload.mjs, e.g. `create customer`, instead of the mix),
// BENCH_SCALED (the service to scale; default the one with the most CPU per mix request in
// helm/recur/capacity.json), BENCH_CORES_PER_REPLICA (1). A machine with fewer cores than
// 4 × BENCH_CORES_PER_REPLICA + 1 cannot give each replica its own: the run then deals the cores
// round, says so, and its figures show the mechanism, not scale-out.
// BENCH_CPU_LIMIT (e.g. 250m) instead limits each gateway and scaled replica to that much CPU, as
// a Kubernetes CPU limit does (CFS quota on a cgroup of its own; needs root), nothing pinned: on a
// machine with few cores, the replicas are then what limits, and two give what one cannot.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ROOT } from '../bootstrap.mjs';
import { CAPACITY_FILE } from '../helm/capacity-values.mjs';
import { closedLoop, cpuBetween, cpuByGroup, descendantsNamed, loadAverage, ms, processTable, startProcesses } from './harness.mjs';
import { allowedCores, coreLayout, limitCpu, parseCpuLimit, pin } from './pinning.mjs';
import { KINDS, MIX, prepareWorkload } from './workload.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PER_REPLICA = Number(process.env.BENCH_CORES_PER_REPLICA ?? 1);
/** Cores of CPU time each gateway and scaled replica may use (a Kubernetes CPU limit); undefined: pinned to cores of their own. */
const CPU_LIMIT = parseCpuLimit(process.env.BENCH_CPU_LIMIT);
/** A process busy for this share of its cores' time is what limited the run. */
const SATURATED = 0.85;
/** One kind of work (workload.mjs KINDS) or, by default, the mix. */
const WORK = process.env.BENCH_WORK ?? 'mix';
if (WORK !== 'mix' && !KINDS.includes(WORK)) throw new Error(`BENCH_WORK: one of ${KINDS.join(', ')}, or mix`);

/** The service with the most CPU per mix request in the capacity table (subscription where there is none). */
function busiestService() {
  try {
    const { processes } = JSON.parse(readFileSync(CAPACITY_FILE, 'utf8'));
    return Object.entries(processes).filter(([name]) => !['gateway', 'postgresql', 'kafka'].includes(name)).sort(([, a], [, b]) => b.cpuUsPerRequest.mix - a.cpuUsPerRequest.mix)[0][0];
  } catch {
    return 'subscription';
  }
}

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const scaled = process.env.BENCH_SCALED ?? busiestService();
const cores = allowedCores();
const pinnedNames = ['gateway-1', 'gateway-2', `${scaled}-1`, `${scaled}-2`];
const layout = CPU_LIMIT === undefined ? coreLayout(cores, pinnedNames, { perProcess: PER_REPLICA }) : { sets: {}, rest: cores, shared: false };
console.log(`\nRecur scale-out: gateway and ${scaled}, 1 then 2 replicas; ${WORK === 'mix' ? `the mix (${MIX})` : WORK}, ${CONCURRENCY} clients, ${SECONDS} s a run`);
if (CPU_LIMIT !== undefined) {
  console.log(`cores ${cores.join(',')}: each gateway and ${scaled} replica limited to ${CPU_LIMIT} of a core (CFS quota, as a Kubernetes CPU limit of ${Math.round(CPU_LIMIT * 1000)}m); the rest unlimited`);
} else {
  console.log(`cores ${cores.join(',')}: ${pinnedNames.map((name) => `${name} ${layout.sets[name].join(',')}`).join('; ')}; the rest ${layout.rest.join(',')}`);
}
if (layout.shared) {
  console.log(`NOTE: ${cores.length} cores, ${layout.needed} needed for a core set of each replica's own and one for the rest: the replicas share cores, so these figures show the mechanism, not scale-out.`);
}
console.log(`load average before: ${loadAverage()}\n`);

/** Busy and total clock ticks of `cores` so far (/proc/stat's cpuN lines; idle and iowait are not busy). */
function coreTicks(cores) {
  let busy = 0;
  let total = 0;
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (!match || !cores.includes(Number(match[1]))) continue;
    const ticks = match[2].trim().split(/\s+/).map(Number);
    const sum = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    total += sum;
    busy += sum - ticks[3] - ticks[4];
  }
  return { busy, total };
}

async function measure(replicas) {
  const stack = await startProcesses({
    name: `scale-${replicas}`,
    scaled,
    replicas,
    ownBroker: true,
    appEnv: { gateway: { ADMISSION_MAX_IN_FLIGHT: '0' }, invoicing: { INVOICE_MAIL_ON_FINALIZE: 'false' } },
  });
  const releases = [];
  try {
    // Each gateway and scaled replica on its own set (or under its own CPU limit); everything else, this load generator included, on the rest.
    const table = processTable();
    const replicaName = (app) => `${app.app}-${stack.apps.filter((other) => other.app === app.app).indexOf(app) + 1}`;
    const groups = {};
    for (const app of stack.apps) {
      const name = replicaName(app);
      if (CPU_LIMIT !== undefined && pinnedNames.includes(name)) {
        releases.push(limitCpu(app.pid, CPU_LIMIT, name));
        groups[name] = { pids: [app.pid], cores: CPU_LIMIT };
      } else if (layout.sets[name]) {
        pin(app.pid, layout.sets[name]);
        groups[name] = { pids: [app.pid], cores: layout.sets[name].length };
      } else {
        pin(app.pid, layout.rest);
        (groups['other apps'] ??= { pids: [], cores: layout.rest.length }).pids.push(app.pid);
      }
    }
    // The postmaster first: the backends it forks later inherit its affinity.
    for (const [group, comm] of [['postgresql', 'postgres'], ['kafka', 'java']]) {
      const pids = descendantsNamed(table, process.pid, comm);
      for (const pid of pids) pin(pid, layout.rest);
      groups[group] = { pids, cores: layout.rest.length };
    }
    pin(process.pid, layout.rest);
    const measured = { processGroups: (now) => ({ ...Object.fromEntries(Object.entries(groups).map(([name, { pids }]) => [name, pids])), postgresql: descendantsNamed(now, process.pid, 'postgres') }) };

    const workload = await prepareWorkload(stack, { connections: CONCURRENCY * 2 });
    const request = WORK === 'mix' ? workload.mix : workload.requests[WORK];
    await closedLoop({ seconds: Math.min(3, SECONDS), concurrency: CONCURRENCY }, request);
    const before = cpuByGroup(measured);
    const ticksBefore = coreTicks(cores);
    const result = await closedLoop({ seconds: SECONDS, concurrency: CONCURRENCY }, request);
    const cpu = cpuBetween(before, cpuByGroup(measured));
    const ticksAfter = coreTicks(cores);
    // The machine's cores, busy with anything: on a shared machine, other work may be the limit.
    const machineBusy = (ticksAfter.busy - ticksBefore.busy) / Math.max(1, ticksAfter.total - ticksBefore.total);
    const stackShare = Object.values(cpu).reduce((sum, msUsed) => sum + msUsed, 0) / (result.elapsed * 1000 * cores.length);
    workload.close();
    groups['bench client'] = { cores: layout.rest.length };
    const busy = Object.fromEntries(Object.entries(cpu).map(([group, msUsed]) => [group, msUsed / (result.elapsed * 1000 * groups[group].cores)]));
    return { result, busy, machineBusy, stackShare };
  } finally {
    await stack.stop();
    for (const release of releases) release();
  }
}

const runs = {};
for (const replicas of [1, 2]) {
  runs[replicas] = await measure(replicas);
  const { result, busy, machineBusy, stackShare } = runs[replicas];
  const [top, share] = Object.entries(busy).sort(([, a], [, b]) => b - a)[0];
  const pct = (value) => `${(100 * value).toFixed(0)} %`;
  const limit = share >= SATURATED
    ? `${top} (${pct(share)} of its cores)`
    : machineBusy >= SATURATED
      ? `the machine: its cores ${pct(machineBusy)} busy, ${pct(stackShare)} of them with this stack (the rest other work); busiest process ${top} at ${pct(share)} of its cores`
      : `no process nor the machine had its cores ${pct(SATURATED)} busy (busiest ${top}, ${pct(share)}; machine ${pct(machineBusy)}): waiting (PostgreSQL locks or the disk, the broker's round trips)`;
  runs[replicas].limit = limit;
  console.log(`${replicas} replica(s): ${result.rate.toFixed(1)} requests/s, p50 ${ms(result.p50)}, p99 ${ms(result.p99)}, errors ${result.errors}; limited by ${limit}`);
  console.log(`  share of its cores busy: ${Object.entries(busy).map(([group, value]) => `${group} ${(100 * value).toFixed(0)} %`).join(', ')}\n`);
}

console.log('| replicas (gateway, ' + scaled + ') | requests/s | p99 | limited by |');
console.log('|---|---:|---:|---|');
for (const replicas of [1, 2]) {
  const { result, limit } = runs[replicas];
  console.log(`| ${replicas} | ${result.rate.toFixed(1)} | ${ms(result.p99)} | ${limit} |`);
}
console.log(`\ntwo replicas against one: ${(runs[2].result.rate / runs[1].result.rate).toFixed(2)}× the requests a second${layout.shared ? ' (cores shared: not a scale-out measurement)' : ''}${CPU_LIMIT !== undefined ? `, each replica limited to ${Math.round(CPU_LIMIT * 1000)}m` : ''}; load average after: ${loadAverage()}`);
