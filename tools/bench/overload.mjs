#!/usr/bin/env node
// Overload: what the gateway answers when more is asked of it than the stack can serve.
//
//   npm run bench:overload                              # `npm start`'s single process (a fresh data dir)
//   BENCH_MODE=processes npm run bench:overload         # every app its own process, events through Kafka
//   BENCH_ADMISSION=off npm run bench:overload          # the same with the gateway's admission control off
//
// A mixed read/write load (mixed-load.mjs: creates, retrieves and lists of customers) from
// BENCH_ACCOUNTS accounts (32), each its own key with its rate limits raised out of the way, so no
// one key's limit is what refuses a request. Phases, each BENCH_SECONDS (15):
//   peak       closed loop of BENCH_CONCURRENCY (16) clients: the stack's peak rate
//   unloaded   open loop (requests at fixed times, whatever the answers) at a tenth of the peak
//   half peak  open loop at half the peak
//   2× peak    open loop at twice the peak, from BENCH_CONNECTIONS (512) sockets over all accounts
// and prints, against the unloaded run: the answered rate, the share refused (503 from admission
// control, 429 from rate limits), the p99 of admitted (2xx) requests and how fast refusals came.
// Every figure of one run comes from the same stack on the same machine: read the ratios.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop, loadAverage, ms, openLoop, percentile, phases, startProcesses, startSingleProcess, treeRssMiB } from './harness.mjs';
import { closeAccounts, isShed, isSuccess, MIX, mixedRequest, outcomes, p50p99, prepareAccounts } from './mixed-load.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 32);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 512);
const MODE = process.env.BENCH_MODE ?? 'single';
const ADMISSION_OFF = process.env.BENCH_ADMISSION === 'off';

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const gatewayEnv = ADMISSION_OFF ? { ADMISSION_MAX_IN_FLIGHT: '0' } : {};
const startedAt = Date.now();
const stack = MODE === 'processes'
  ? await startProcesses({ name: 'overload', scaled: 'subscription', appEnv: { gateway: gatewayEnv } })
  : await startSingleProcess({ env: gatewayEnv, stderr: 'ignore' });
console.log(`\nRecur overload benchmark (${stack.description}); admission control ${ADMISSION_OFF ? 'OFF (ADMISSION_MAX_IN_FLIGHT=0)' : 'on, its defaults'}`);
console.log(`${ACCOUNTS} accounts, one key each; mix: ${MIX}; ${SECONDS} s per phase; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
console.log(`load average before: ${loadAverage()} on ${availableParallelism()} cores (the machine is shared: compare phases of this run, not runs)\n`);

const accounts = await prepareAccounts(stack, { accounts: ACCOUNTS, connections: Math.ceil(CONNECTIONS / ACCOUNTS) });
// Warm-up (JIT, pools, channels), not measured.
await closedLoop({ seconds: 5, concurrency: CONCURRENCY }, mixedRequest(accounts, outcomes()));

const { run } = phases(stack);
const tallies = {};
const measure = (name, label, loop) => {
  const tally = (tallies[name] = outcomes());
  return run(name, label, () => loop(mixedRequest(accounts, tally)));
};
await measure('peak', `peak: closed loop of ${CONCURRENCY}`, (request) => closedLoop({ seconds: SECONDS, concurrency: CONCURRENCY }, request));
const peak = tallies.peak.count(isSuccess) / SECONDS;
const offered = { unloaded: peak / 10, half: peak / 2, double: peak * 2 };
const loop = { seconds: SECONDS, concurrency: CONNECTIONS };
await measure('unloaded', `unloaded: ${offered.unloaded.toFixed(0)}/s (a tenth)`, (request) => openLoop(loop, offered.unloaded, request));
await measure('half', `half peak: ${offered.half.toFixed(0)}/s`, (request) => openLoop(loop, offered.half, request));
await measure('double', `2× peak: ${offered.double.toFixed(0)}/s`, (request) => openLoop(loop, offered.double, request));

const unloadedP99 = percentile(tallies.unloaded.latencies(isSuccess), 99);
const halfP99 = percentile(tallies.half.latencies(isSuccess), 99);
console.log(`\npeak ${peak.toFixed(0)} answered/s; unloaded p99 ${ms(unloadedP99)}, half-peak p99 ${ms(halfP99)}\n`);
console.log('| phase | offered /s | 2xx /s (× peak) | refused 503 / 429 | other errors | admitted (2xx) latency | admitted p99 ÷ unloaded p99 | ÷ half-peak p99 | refusals latency |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const [name, label] of [['peak', `peak (${CONCURRENCY} clients)`], ['unloaded', 'unloaded (peak ÷ 10)'], ['half', 'half peak'], ['double', '2× peak']]) {
  const tally = tallies[name];
  const admitted = tally.latencies(isSuccess);
  const total = tally.count(() => true);
  const shed = (status) => tally.count((s) => s === status);
  const others = tally.count((s) => !isSuccess(s) && !isShed(s));
  const p99 = percentile(admitted, 99);
  console.log(
    `| ${label} | ${name === 'peak' ? 'closed loop' : offered[name].toFixed(0)} | ${(admitted.length / SECONDS).toFixed(0)} (${(admitted.length / SECONDS / peak).toFixed(2)}) | ${(100 * shed('503') / total).toFixed(1)} % / ${(100 * shed('429') / total).toFixed(1)} % | ${others} | ${p50p99(admitted)} | ${(p99 / unloadedP99).toFixed(2)} | ${(p99 / halfP99).toFixed(2)} | ${p50p99(tally.latencies(isShed))} |`,
  );
}
console.log(`\nanswers by status: ${Object.entries(tallies).map(([name, tally]) => `${name}: ${tally.describe()}`).join('; ')}`);
console.log(`load average after: ${loadAverage()}; memory after load ${treeRssMiB(stack.pids()).toFixed(0)} MiB`);

await closeAccounts(accounts);
await stack.stop();
