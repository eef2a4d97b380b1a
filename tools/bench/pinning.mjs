// Pinning the processes of a stack to cores of their own (taskset), for the scale-out bench
// (scale.mjs): two replicas measured on cores of their own, not two processes sharing one.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

/**
 * A CPU limit as Kubernetes sets one (`resources.limits.cpu`): the kernel's CFS bandwidth control,
 * `cores` of CPU time per 100 ms period, on a cgroup of the process's own (cgroup v2 `cpu.max`, or
 * v1 `cpu.cfs_quota_us`). Answers a function that removes the cgroup once the process has exited,
 * or throws when this machine lets no cgroup be made (not root, no cpu controller).
 */
export function limitCpu(pid, cores, name) {
  const PERIOD_US = 100_000;
  const quota = Math.max(1_000, Math.round(cores * PERIOD_US));
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers') && readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8').split(/\s+/).includes('cpu');
  const dir = v2 ? `/sys/fs/cgroup/recur-bench-${name}-${pid}` : `/sys/fs/cgroup/cpu/recur-bench-${name}-${pid}`;
  mkdirSync(dir);
  if (v2) {
    writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
  } else {
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota));
  }
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  return () => {
    try {
      rmdirSync(dir);
    } catch {
      // Still holding the process (it has not exited yet): the kernel keeps an empty cgroup's folder harmlessly.
    }
  };
}

/** `BENCH_CPU_LIMIT` as Kubernetes writes a CPU quantity: `250m` or `0.25` (cores); undefined when unset. */
export function parseCpuLimit(value) {
  if (value === undefined || value === '') return undefined;
  const cores = value.endsWith('m') ? Number(value.slice(0, -1)) / 1000 : Number(value);
  if (!(cores > 0)) throw new Error(`BENCH_CPU_LIMIT: a CPU quantity such as 250m or 0.25, not ${value}`);
  return cores;
}
