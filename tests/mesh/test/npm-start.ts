import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, freePortRun, REPO_ROOT } from '@recur/testing';

export interface NpmStartPorts {
  http: number;
  pg: number;
  /** The admin listener: /metrics and /operator/…. */
  admin: number;
  smtp: number;
  grpcBase: number;
}

export interface StartedStack {
  child: ChildProcess;
  ports: NpmStartPorts;
  baseUrl: string;
  /** The admin listener (/metrics, /operator/…), on 127.0.0.1. */
  adminUrl: string;
  metricsUrl: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** Free ports for every listener `npm start` opens. */
export async function freeNpmStartPorts(): Promise<NpmStartPorts> {
  return { http: await freePort(), pg: await freePort(), admin: await freePort(), smtp: await freePort(), grpcBase: await freePortRun(6) };
}

/** The environment that points `npm start` at `dataDir` and `ports` (built apps, no SMTP server of its own). */
export function npmStartEnv(dataDir: string, ports: NpmStartPorts, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // The tests run the built apps (npm test builds first).
    RECUR_SKIP_BUILD: '1',
    RECUR_DATA_DIR: dataDir,
    PORT: String(ports.http),
    RECUR_PG_PORT: String(ports.pg),
    ADMIN_PORT: String(ports.admin),
    RECUR_SMTP_PORT: String(ports.smtp),
    RECUR_GRPC_BASE_PORT: String(ports.grpcBase),
    SMTP_URL: '',
    LOG_LEVEL: 'warn',
    ...env,
  };
}

/** `npm start` (tools/start.mjs) on `dataDir`, resolved once its banner is printed. */
export async function npmStart(dataDir: string, env: Record<string, string> = {}, ports?: NpmStartPorts): Promise<StartedStack> {
  const chosen = ports ?? (await freeNpmStartPorts());
  const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'start.mjs')], { cwd: REPO_ROOT, env: npmStartEnv(dataDir, chosen, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + 150_000;
  while (!stdout.includes('Recur is running')) {
    if (hasExited) throw new Error(`npm start exited while starting:\n${stdout}\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start was not ready in time:\n${stdout}\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const adminUrl = `http://127.0.0.1:${chosen.admin}`;
  return { child, ports: chosen, baseUrl: `http://127.0.0.1:${chosen.http}`, adminUrl, metricsUrl: `${adminUrl}/metrics`, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The process and every process below it (Linux: read from /proc), parents first. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid …"; comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

/**
 * kill -9 of the whole stack at once: Node.js and its PostgreSQL (which runs in a process group
 * of its own, so a group kill would miss it) with every backend. Resolves once Node has exited.
 */
export async function killStack(stack: StartedStack): Promise<number[]> {
  const pids = processTree(stack.child.pid!);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  await stack.exited;
  return pids;
}
