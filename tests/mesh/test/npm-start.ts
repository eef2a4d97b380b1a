import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from '@recur/testing';

/** A run of `count` consecutive free ports on 127.0.0.1 (the six services take consecutive gRPC ports). */
export async function freePortRun(count: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = await freePort();
    if (base + count > 65_535) continue;
    let free = true;
    for (let port = base + 1; free && port < base + count; port++) free = await isFree(port);
    if (free) return base;
  }
}

export interface StartedStack {
  child: ChildProcess;
  baseUrl: string;
  metricsUrl: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/**
 * `npm start` as a person runs it (tools/start.mjs: every app in one process over an embedded
 * PostgreSQL), on free ports and in `dataDir`, resolved once its banner says it is running.
 * The built apps are used as they are (RECUR_SKIP_BUILD: `npm test` builds first).
 */
export async function npmStart(dataDir: string, env: Record<string, string> = {}): Promise<StartedStack> {
  const [httpPort, pgPort, metricsPort, smtpPort, grpcBasePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePortRun(6)];
  const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'start.mjs')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      RECUR_SKIP_BUILD: '1',
      RECUR_DATA_DIR: dataDir,
      PORT: String(httpPort),
      RECUR_PG_PORT: String(pgPort),
      METRICS_PORT: String(metricsPort),
      RECUR_SMTP_PORT: String(smtpPort),
      RECUR_GRPC_BASE_PORT: String(grpcBasePort),
      SMTP_URL: '',
      KAFKA_BROKERS: '',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  return { child, baseUrl: `http://127.0.0.1:${httpPort}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, stdout: () => stdout, stderr: () => stderr, exited };
}
