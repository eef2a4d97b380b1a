#!/usr/bin/env node
// Overload: what the gateway answers when more is asked of it than the stack can serve.
//
//   npm run bench:overload                              # `npm start`'s single process (fresh data dirs)
//   BENCH_MODE=processes npm run bench:overload         # every app its own process, events through Kafka
//
// A mixed read/write load (many-accounts-load.mjs: creates, retrieves and lists of customers) from
// BENCH_ACCOUNTS accounts (32), each its own key with its rate limits raised out of the way, so no
// one key's limit is what refuses a request. Two stacks, one after the other, each BENCH_SECONDS
// (15) a phase:
//   admission control off (ADMISSION_MAX_IN_FLIGHT=0):
//     peak       closed loop of BENCH_CONCURRENCY (16) clients: the stack's peak rate
//     unloaded   open loop (requests at fixed times, whatever the answers) at a tenth of the peak
//     half peak  open loop at half the peak
//     2× peak    open loop at twice the peak, from BENCH_CONNECTIONS (512) sockets over all accounts
//   admission control on, its defaults: unloaded, then 2× the first stack's peak
// and prints, against each stack's unloaded run: the answered rate, the share refused (503 from
// admission control, 429 from rate limits), the p99 of admitted (2xx) requests and how fast
// refusals came. Every figure of one run comes from the same machine within minutes: read the ratios.
//
// BENCH_CLIENT_CORES (e.g. `1`): this load generator runs on those cores and the stack (every
// process it starts: the apps, PostgreSQL, the broker) on the others, pinned with taskset, so the
// client that offers twice the peak does not take the stack's CPU, as a client on another machine
// would not. Without it they share every core.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop, loadAverage, ms, openLoop, percentile, phases, processTable, startProcesses, startSingleProcess, treeRssMiB, withDescendants } from './harness.mjs';
import { allowedCores, pin } from './pinning.mjs';
import { closeAccounts, isShed, isSuccess, MIX, mixedRequest, outcomes, p50p99, prepareAccounts } from './many-accounts-load.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 32);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 512);
const MODE = process.env.BENCH_MODE ?? 'single';
const CLIENT_CORES = process.env.BENCH_CLIENT_CORES?.split(',').map(Number);
const STACK_CORES = CLIENT_CORES && allowedCores().filter((core) => !CLIENT_CORES.includes(core));
if (STACK_CORES && STACK_CORES.length === 0) throw new Error('BENCH_CLIENT_CORES leaves no core for the stack');

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
console.log(`\nRecur overload benchmark; ${ACCOUNTS} accounts, one key each; mix: ${MIX}; ${SECONDS} s per phase`);
console.log(`load average before: ${loadAverage()} on ${availableParallelism()} cores (the machine is shared: compare phases of this run, not runs)`);

const tallies = {};
/** Each phase's seconds, from its first request to its last answer (a queue drains past the loop's end). */
const elapsed = {};
const offered = {};
let peak;

/** A fresh stack with `gatewayEnv`, its accounts warmed up, `work(measure)` run on it, then stopped. */
async function onStack(label, gatewayEnv, work) {
  const startedAt = Date.now();
  const stack = MODE === 'processes'
    ? await startProcesses({ name: 'overload', scaled: 'subscription', appEnv: { gateway: gatewayEnv } })
    : await startSingleProcess({ env: gatewayEnv, stderr: 'ignore' });
  console.log(`\n${label} — ${stack.description}; ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  if (CLIENT_CORES) {
    // The postmaster and the broker first among them: the processes they start later inherit the affinity.
    for (const pid of withDescendants(processTable(), [process.pid]).filter((pid) => pid !== process.pid)) pin(pid, STACK_CORES);
    pin(process.pid, CLIENT_CORES);
    console.log(`the stack on cores ${STACK_CORES.join(',')}, this load generator on ${CLIENT_CORES.join(',')}`);
  }
  const accounts = await prepareAccounts(stack, { accounts: ACCOUNTS, connections: Math.ceil(CONNECTIONS / ACCOUNTS) });
  // Warm-up (JIT, pools, channels), not measured.
  await closedLoop({ seconds: 5, concurrency: CONCURRENCY }, mixedRequest(accounts, outcomes()));
  const { run, results } = phases(stack);
  await work(async (name, phaseLabel, loop) => {
    const tally = (tallies[name] = outcomes());
    await run(name, phaseLabel, () => loop(mixedRequest(accounts, tally)));
    elapsed[name] = results[name].elapsed;
  });
  console.log(`memory after load ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);
  await closeAccounts(accounts);
  await stack.stop();
}

const open = { seconds: SECONDS, concurrency: CONNECTIONS };
await onStack('admission control OFF (ADMISSION_MAX_IN_FLIGHT=0)', { ADMISSION_MAX_IN_FLIGHT: '0' }, async (measure) => {
  await measure('offPeak', `peak: closed loop of ${CONCURRENCY}`, (request) => closedLoop({ seconds: SECONDS, concurrency: CONCURRENCY }, request));
  peak = tallies.offPeak.count(isSuccess) / elapsed.offPeak;
  Object.assign(offered, { offUnloaded: peak / 10, offHalf: peak / 2, offDouble: peak * 2, onUnloaded: peak / 10, onDouble: peak * 2 });
  await measure('offUnloaded', `unloaded: ${offered.offUnloaded.toFixed(0)}/s (a tenth)`, (request) => openLoop(open, offered.offUnloaded, request));
  await measure('offHalf', `half peak: ${offered.offHalf.toFixed(0)}/s`, (request) => openLoop(open, offered.offHalf, request));
  await measure('offDouble', `2× peak: ${offered.offDouble.toFixed(0)}/s`, (request) => openLoop(open, offered.offDouble, request));
});
await onStack('admission control ON (its defaults)', {}, async (measure) => {
  await measure('onUnloaded', `unloaded: ${offered.onUnloaded.toFixed(0)}/s`, (request) => openLoop(open, offered.onUnloaded, request));
  await measure('onDouble', `2× peak: ${offered.onDouble.toFixed(0)}/s`, (request) => openLoop(open, offered.onDouble, request));
});

const p99Of = (name) => percentile(tallies[name].latencies(isSuccess), 99);
console.log(`\npeak ${peak.toFixed(0)} answered/s (admission control off); unloaded p99 ${ms(p99Of('offUnloaded'))} (off), ${ms(p99Of('onUnloaded'))} (on)\n`);
console.log('| admission control | phase | offered /s | 2xx /s over the phase and its drain (× peak) | refused 503 / 429 | other errors | admitted (2xx) latency | admitted p99 ÷ unloaded p99 | refusals latency |');
console.log('|---|---|---|---|---|---|---|---|---|');
const rows = [['offPeak', 'off', `peak (${CONCURRENCY} clients)`, 'offUnloaded'], ['offUnloaded', 'off', 'unloaded (peak ÷ 10)', 'offUnloaded'], ['offHalf', 'off', 'half peak', 'offUnloaded'],
  ['offDouble', 'off', '2× peak', 'offUnloaded'], ['onUnloaded', 'on', 'unloaded (peak ÷ 10)', 'onUnloaded'], ['onDouble', 'on', '2× peak', 'onUnloaded']];
for (const [name, admission, label, unloaded] of rows) {
  const tally = tallies[name];
  const admitted = tally.latencies(isSuccess);
  const total = tally.count(() => true);
  const shed = (status) => tally.count((s) => s === status);
  const others = tally.count((s) => !isSuccess(s) && !isShed(s));
  console.log(
    `| ${admission} | ${label} | ${name === 'offPeak' ? 'closed loop' : offered[name].toFixed(0)} | ${(admitted.length / elapsed[name]).toFixed(0)} (${(admitted.length / elapsed[name] / peak).toFixed(2)}) | ${(100 * shed('503') / total).toFixed(1)} % / ${(100 * shed('429') / total).toFixed(1)} % | ${others} | ${p50p99(admitted)} | ${(percentile(admitted, 99) / p99Of(unloaded)).toFixed(2)} | ${p50p99(tally.latencies(isShed))} |`,
  );
}
console.log(`\nanswers by status: ${Object.entries(tallies).map(([name, tally]) => `${name}: ${tally.describe()}`).join('; ')}`);
console.log(`load average after: ${loadAverage()}`);
