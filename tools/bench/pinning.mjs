// Pinning the processes of a stack to cores of their own (taskset), for the scale-out bench
// (scale.mjs): two replicas measured on cores of their own, not two processes sharing one.
import { execFileSync } from 'node:child_process';

/** The cores this process may run on (its affinity, as `taskset -pc` prints it), ascending. */
export function allowedCores(pid = process.pid) {
  const list = execFileSync('taskset', ['-pc', String(pid)], { encoding: 'utf8' }).split(':').pop().trim();
  return list.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    return Array.from({ length: to - from + 1 }, (_, k) => from + k);
  });
}

/**
 * Which cores each pinned process gets: `pinned` (names, e.g. gateway-1, gateway-2,
 * subscription-1, subscription-2) `perProcess` cores each, in order, and `rest` (everything else:
 * the other apps, PostgreSQL, the broker, the load generator) what is left. `shared` is true when
 * `cores` are too few for that, and sets were dealt round the cores instead (processes then share
 * cores: no measurement of scale-out). The same layout serves the run with one replica of each
 * (its second replicas' cores then stay idle), so both runs give the rest the same cores.
 */
export function coreLayout(cores, pinned, { perProcess = 1, restAtLeast = 1 } = {}) {
  const needed = pinned.length * perProcess + restAtLeast;
  const shared = cores.length < needed;
  const sets = {};
  let next = 0;
  for (const name of pinned) {
    sets[name] = Array.from({ length: perProcess }, () => cores[next++ % cores.length]);
  }
  const rest = shared ? [...cores] : cores.slice(next);
  return { sets, rest, shared, needed };
}

/** Pins every thread of `pid` (taskset -a) to `cores`; the threads and children it starts later inherit it. */
export function pin(pid, cores) {
  execFileSync('taskset', ['-a', '-p', '-c', cores.join(','), String(pid)], { stdio: 'ignore' });
}
