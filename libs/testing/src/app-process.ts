import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { sleep } from './eventually';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * How long an app (or a whole mesh: tests/mesh) may take to become ready: 180 s, or
 * RECUR_TEST_READY_TIMEOUT_MS. Booting is mostly CPU (loading Nest, Prisma's WASM, migrations), and
 * seven engineers' test runs on 2 cores can make a boot that takes 5 s alone take minutes.
 */
export const READY_TIMEOUT_MS = readyTimeoutFromEnv(process.env.RECUR_TEST_READY_TIMEOUT_MS);

function readyTimeoutFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 180_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms <= 0) throw new Error(`RECUR_TEST_READY_TIMEOUT_MS must be a positive number of milliseconds, got '${raw}'`);
  return ms;
}

/** Lines of an app's output a failure message ends with. */
const OUTPUT_TAIL_LINES = 40;

function lastLines(output: string): string {
  const lines = output.trimEnd().split('\n');
  const tail = lines.slice(-OUTPUT_TAIL_LINES).join('\n');
  return lines.length > OUTPUT_TAIL_LINES ? `(last ${OUTPUT_TAIL_LINES} of ${lines.length} lines)\n${tail}` : tail || '(no output)';
}

export type AppName = 'gateway' | 'catalog' | 'subscription' | 'invoicing' | 'payments' | 'usage-metering' | 'webhook-dispatch';

export interface AppProcess {
  app: AppName;
  readonly pid: number;
  /** Everything the process wrote, for assertions and for failure messages. */
  output(): string;
  /** Sends a signal and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when the process has exited, however it ended (a crash it caused itself, say). */
  exited(): Promise<number | null>;
  /** Starts the same app again with the same environment; `env` changes it for this and later starts. */
  restart(env?: Record<string, string>): Promise<void>;
}

export interface StartAppOptions {
  env: Record<string, string>;
  /** How to know it is ready: gRPC health on this port, or HTTP GET on this URL answering 200. */
  ready: { grpcPort: number } | { httpUrl: string };
  /** Default READY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Node.js options before the script, e.g. `--cpu-prof` (refused in NODE_OPTIONS). */
  nodeArgs?: string[];
  /** The checkout whose build runs (`<root>/apps/<app>/dist/main.js`): another release's, say. Default this one. */
  root?: string;
}

function checkGrpcHealth(port: number): Promise<boolean> {
  const Client = grpc.makeGenericClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'Health');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise((done) => {
    type Check = (request: { service: string }, options: grpc.CallOptions, callback: (error: Error | null, response?: { status: string | number }) => void) => void;
    (client as unknown as { check: Check }).check({ service: '' }, { deadline: Date.now() + 1000 }, (error, response) => {
      client.close();
      done(!error && (response?.status === 'SERVING' || response?.status === 1));
    });
  });
}

async function checkHttp(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

/** Runs `node apps/<app>/dist/main.js` (of `options.root`, default this checkout) as its own process and waits until it is ready. */
export async function startApp(app: AppName, options: StartAppOptions): Promise<AppProcess> {
  let child: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;

  const env = { ...options.env };
  const launch = async () => {
    child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(options.root ?? REPO_ROOT, 'apps', app, 'dist', 'main.js')], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const timeoutMs = options.timeoutMs ?? READY_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const readiness = 'grpcPort' in options.ready ? `gRPC health on port ${options.ready.grpcPort}` : `GET ${options.ready.httpUrl}`;
    let exitedEarly = false;
    void exited.then(() => (exitedEarly = true));
    while (Date.now() < deadline) {
      if (exitedEarly) throw new Error(`${app} (pid ${child.pid}) exited with code ${child.exitCode ?? child.signalCode} while starting; its output:\n${lastLines(output)}`);
      const ready = 'grpcPort' in options.ready ? await checkGrpcHealth(options.ready.grpcPort) : await checkHttp(options.ready.httpUrl);
      if (ready) return;
      await sleep(150);
    }
    child.kill('SIGKILL');
    throw new Error(
      `${app} (pid ${child.pid}) was not ready within ${Math.round(timeoutMs / 1000)} s (${readiness}; RECUR_TEST_READY_TIMEOUT_MS raises the bound); its output:\n${lastLines(output)}`,
    );
  };

  await launch();
  return {
    app,
    get pid() {
      return child.pid ?? -1;
    },
    output: () => output,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
    exited: () => exited,
    async restart(changes: Record<string, string> = {}) {
      Object.assign(env, changes);
      await launch();
    },
  };
}
