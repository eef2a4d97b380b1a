import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryDatabase, freePort, REPO_ROOT, testKafkaBrokers } from '@recur/testing';

/**
 * `npm start` (tools/start.mjs: every app in one process over an embedded PostgreSQL) stops
 * cleanly on Ctrl-C and on SIGTERM: exit code 0, nothing on stderr but its progress lines, and
 * its PostgreSQL stopped after the apps that held connections to it. Each run does some work
 * first (a plan in the catalog, a customer in subscription), so the apps' pools hold
 * connections when the signal comes, as they do for a person who just tried the API.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'recur-start-'));
// The embedded PostgreSQL runs as another OS user when the tests run as root.
chmodSync(dataDir, 0o755);

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A run of `count` consecutive free ports on 127.0.0.1 (the six services take consecutive gRPC ports). */
async function freePortRun(count: number): Promise<number> {
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

interface Started {
  child: ChildProcess;
  baseUrl: string;
  metricsUrl: string;
  /** The admin database of the PostgreSQL cluster npm start runs. */
  postgresUrl: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

async function npmStart(env: Record<string, string>): Promise<Started> {
  const [httpPort, pgPort, metricsPort, smtpPort, grpcBasePort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePortRun(6)];
  const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'start.mjs')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      // The tests run the built apps (npm test builds first).
      RECUR_SKIP_BUILD: '1',
      RECUR_DATA_DIR: dataDir,
      PORT: String(httpPort),
      RECUR_PG_PORT: String(pgPort),
      METRICS_PORT: String(metricsPort),
      RECUR_SMTP_PORT: String(smtpPort),
      RECUR_GRPC_BASE_PORT: String(grpcBasePort),
      SMTP_URL: '',
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
  return { child, baseUrl: `http://127.0.0.1:${httpPort}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, postgresUrl: `postgresql://postgres:postgres@127.0.0.1:${pgPort}/postgres`, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The sandbox secret key, printed once by the first start. */
let key: string;

async function post(baseUrl: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.text();
  return response.status;
}

/** The signal, then what a clean stop leaves: exit 0, only the progress lines on stderr, PostgreSQL gone. */
async function expectCleanStop(started: Started, signal: NodeJS.Signals): Promise<void> {
  // Work first, so the catalog's and subscription's pools hold idle connections at the signal.
  expect(await post(started.baseUrl, '/v1/plans', { name: 'Basic', pricing_model: 'flat_rate', amount_monthly: 1000 })).toBe(201);
  expect(await post(started.baseUrl, '/v1/customers', { name: 'Ada', email: 'ada@example.com' })).toBe(201);
  started.child.kill(signal);
  const code = await started.exited;
  const stderr = started.stderr();
  expect({ code, stderr }).toEqual({ code: 0, stderr: expect.stringContaining(`Stopping (${signal})…`) });
  // Everything after the progress lines: nothing. No "Unhandled 'error' event", no stack, no part left running.
  expect(stderr.slice(stderr.indexOf('Stopping'))).toBe(`Stopping (${signal})…\n`);
  expect(stderr).not.toMatch(/Unhandled|^\s+at /m);
  expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
}

it('times each request by its route template on /metrics, runs its PostgreSQL durably (SHOW: fsync, full_page_writes, synchronous_commit on), and stops cleanly on Ctrl-C (SIGINT), on the in-process bus', async () => {
  const started = await npmStart({ KAFKA_BROKERS: '' });
  key = /sandbox secret\s+(recur_test_sk_\w+)/.exec(started.stdout())![1];
  // The gateway's timings reach the metrics server, labelled by route template (ids would explode
  // cardinality); a path no route declares is `other`.
  expect(await post(started.baseUrl, '/v1/plans', { name: 'Timed', pricing_model: 'flat_rate', amount_monthly: 1000 })).toBe(201);
  expect(await post(started.baseUrl, '/v1/no-such-route', {})).toBe(404);
  const metrics = await (await fetch(started.metricsUrl)).text();
  // The cluster npm start runs keeps a ledger: crash safety on, as its server reports it.
  const durability: Record<string, string> = {};
  for (const setting of ['fsync', 'full_page_writes', 'synchronous_commit']) {
    durability[setting] = (await queryDatabase<Record<string, string>>(started.postgresUrl, `SHOW ${setting}`))[0][setting];
  }
  await expectCleanStop(started, 'SIGINT');
  expect(durability).toEqual({ fsync: 'on', full_page_writes: 'on', synchronous_commit: 'on' });
  // Read before the stop, checked after it, so a failure here leaves nothing running.
  expect(metrics).toMatch(/^recur_http_server_duration_seconds_count\{method="POST",route="\/v1\/plans",status="201"\} 1$/m);
  expect(metrics).toMatch(/^recur_http_server_duration_seconds_count\{method="POST",route="other",status="404"\} 1$/m);
}, 240_000);

it('stops cleanly on SIGTERM, with Kafka (its consumers close before PostgreSQL stops)', async () => {
  const started = await npmStart({ KAFKA_BROKERS: await testKafkaBrokers(), KAFKA_TOPIC_PREFIX: `start-${process.pid}` });
  await expectCleanStop(started, 'SIGTERM');
}, 240_000);

it('refuses an outbox retention under one hour before starting anything, as a deployed service does', async () => {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'start.mjs')], {
    cwd: REPO_ROOT,
    env: { ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: join(dataDir, 'refused'), OUTBOX_RETENTION_HOURS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect({ code, stderr }).toEqual({ code: 1, stderr: "environment variable OUTBOX_RETENTION_HOURS must be at least 1, got '0'\n" });
  expect(existsSync(join(dataDir, 'refused'))).toBe(false);
});
