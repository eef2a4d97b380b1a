import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryDatabase, REPO_ROOT, testKafkaBrokers } from '@recur/testing';
import { freeNpmStartPorts, npmStart as npmStartOn, npmStartEnv, type StartedStack as Started } from './npm-start';

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

const npmStart = (env: Record<string, string>): Promise<Started> => npmStartOn(dataDir, env);

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

it('times each request by its route template on /metrics, keeps /metrics and /operator off the public port, runs its PostgreSQL durably (SHOW: fsync, full_page_writes, synchronous_commit on), and stops cleanly on Ctrl-C (SIGINT), on the in-process bus', async () => {
  const started = await npmStart({ KAFKA_BROKERS: '' });
  key = /sandbox secret\s+(recur_test_sk_\w+)/.exec(started.stdout())![1];
  // The gateway's timings reach the metrics server, labelled by route template (ids would explode
  // cardinality); a path no route declares is `other`.
  expect(await post(started.baseUrl, '/v1/plans', { name: 'Timed', pricing_model: 'flat_rate', amount_monthly: 1000 })).toBe(201);
  expect(await post(started.baseUrl, '/v1/no-such-route', {})).toBe(404);
  const metrics = await (await fetch(started.metricsUrl)).text();
  // /metrics and the operator surface are on the admin listener only: the public port answers 404,
  // as it does for a path it does not know, whatever the token.
  const token = readFileSync(join(dataDir, 'operator-token'), 'utf8').trim();
  const operatorCall = (base: string) => fetch(`${base}/operator/accounts`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"name":"Door"}' });
  const created = await operatorCall(started.adminUrl);
  const { id: accountId } = (await created.json()) as { id: string };
  const listKeys = (base: string) => fetch(`${base}/operator/accounts/${accountId}/keys/`, { headers: { authorization: `Bearer ${token}` } });
  const doors = {
    publicMetrics: (await fetch(`${started.baseUrl}/metrics`)).status,
    publicOperator: (await operatorCall(started.baseUrl)).status,
    publicOperatorList: (await listKeys(started.baseUrl)).status,
    adminOperator: created.status,
    adminOperatorList: (await listKeys(started.adminUrl)).status,
    adminApi: (await fetch(`${started.adminUrl}/v1/customers`, { headers: { 'x-api-key': key } })).status,
    publicProbe: (await fetch(`${started.baseUrl}/readyz`)).status,
    adminProbe: (await fetch(`${started.adminUrl}/healthz`)).status,
  };
  // The cluster npm start runs keeps a ledger: crash safety on, as its server reports it.
  const durability: Record<string, string> = {};
  for (const setting of ['fsync', 'full_page_writes', 'synchronous_commit']) {
    durability[setting] = (await queryDatabase<Record<string, string>>(`postgresql://postgres:postgres@127.0.0.1:${started.ports.pg}/postgres`, `SHOW ${setting}`))[0][setting];
  }
  await expectCleanStop(started, 'SIGINT');
  expect(durability).toEqual({ fsync: 'on', full_page_writes: 'on', synchronous_commit: 'on' });
  expect(doors).toEqual({ publicMetrics: 404, publicOperator: 404, publicOperatorList: 404, adminOperator: 201, adminOperatorList: 200, adminApi: 404, publicProbe: 200, adminProbe: 200 });
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

it('reports a port already in use at once, naming the variable that moves it, before starting anything', async () => {
  const ports = await freeNpmStartPorts();
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(ports.http, '127.0.0.1', resolve));
  const refusedDir = join(dataDir, 'port-in-use');
  const startedAt = Date.now();
  try {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'tools', 'start.mjs')], { cwd: REPO_ROOT, env: npmStartEnv(refusedDir, ports), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 1, stderr: `Port ${ports.http} on 127.0.0.1 (the HTTP API) is already in use: stop what holds it, or set PORT to another port.\n` });
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(existsSync(refusedDir)).toBe(false); // no PostgreSQL cluster was made
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
});
