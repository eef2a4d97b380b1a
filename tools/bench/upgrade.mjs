#!/usr/bin/env node
// A rolling upgrade under load (docs/operations/upgrades.md#a-rolling-upgrade-under-load):
// every app as its own process on one PostgreSQL, events through Kafka, each behind a TCP balancer
// (a Kubernetes Service). The mesh starts on the last release of every app (releases/<app>.json,
// built by tools/skew/releases.mjs); then, while a mixed load with client retries runs
// (mixed-load.mjs), each app in turn is upgraded as the chart does it: this checkout's migrations
// first (`main.js migrate`, the migration Job), then a new replica started and put behind the
// balancer, then the old one taken out and stopped with SIGTERM. At the end: requests that failed
// beyond the retries, and events lost or duplicated (what the webhook receiver saw against what
// the load created).
//
//   npm run bench:upgrade                      SETTLE_SECONDS=10 CONCURRENCY=4
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { builtReleases } from '../skew/releases.mjs';
import { benchDir, databaseName, imageNodeFlags, loadAverage, SERVICES, startBalancer, startInfrastructure } from './harness.mjs';
import { compareEvents, RETRIES, startMixedLoad } from './mixed-load.mjs';

const require = createRequire(import.meta.url);
const { freePort, startApp, startWebhookReceiver } = require('@recur/testing');
const { startMailCatcher } = require('@recur/local-infra');

/** Seconds of load before the first app is replaced, between two apps, and after the last. */
const SETTLE_SECONDS = Number(process.env.SETTLE_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);
/** How long to wait for the last events to be delivered once the load stopped. */
const DRAIN_MS = 60_000;
/** The order apps are upgraded in: the services, then the gateway. */
const ORDER = [...SERVICES, 'gateway'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const releases = await builtReleases();
/** This checkout's commit, `+` when its tree has changes: what the apps are upgraded to. */
const HEAD = `${spawnSync('git', ['rev-parse', '--short=7', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim()}${spawnSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() ? '+' : ''}`;
log(`last releases: ${ORDER.map((app) => `${app} ${releases[app].version} (${releases[app].commit.slice(0, 12)})`).join(', ')}`);

const dir = benchDir('upgrade');
const infrastructure = await startInfrastructure(dir, { persistent: true });
const { postgres, brokers } = infrastructure;
const mail = await startMailCatcher();
const receiver = await startWebhookReceiver();
const common = { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: `upgrade-${randomBytes(3).toString('hex')}`, METRICS_PORT: '0', GRPC_HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
const extraEnv = { invoicing: { SMTP_URL: mail.url }, 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } };

// One balancer per app: its address is what the peers and the load know; the replicas behind it change.
const balancers = {};
for (const app of ORDER) balancers[app] = { backends: [] };
for (const app of ORDER) Object.assign(balancers[app], await startBalancer(balancers[app].backends));
const peerEnv = Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`, `127.0.0.1:${balancers[service].port}`]));
const operatorToken = randomBytes(16).toString('hex');
for (const app of ORDER) await postgres.ensureDatabase(databaseName(app));

/** Starts one replica of `app` from `root` on ports of its own; answers it with its ports. */
async function startReplica(app, root) {
  const port = await freePort();
  const env = { ...common, ...peerEnv, DATABASE_URL: postgres.urlFor(databaseName(app)), ...extraEnv[app] };
  if (app === 'gateway') {
    const adminPort = await freePort();
    Object.assign(env, { HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort), RECUR_OPERATOR_TOKEN: operatorToken });
    const process = await startApp(app, { env, root, ready: { httpUrl: `http://127.0.0.1:${port}/readyz` }, nodeArgs: imageNodeFlags() });
    return { process, port, adminPort };
  }
  const process = await startApp(app, { env: { ...env, GRPC_PORT: String(port) }, root, ready: { grpcPort: port }, nodeArgs: imageNodeFlags() });
  return { process, port };
}

/** `node apps/<app>/dist/main.js migrate` of this checkout: the chart's migration Job, before any new replica starts. */
function migrate(app) {
  const started = Date.now();
  const result = spawnSync(process.execPath, [join(ROOT, 'apps', app, 'dist', 'main.js'), 'migrate'], { env: { ...process.env, DATABASE_URL: postgres.urlFor(databaseName(app)), LOG_LEVEL: 'warn' }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${app}: migrate failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
  return Date.now() - started;
}

const running = {};
let load;
try {
  log(`starting every app from its last release (load average ${loadAverage()})`);
  for (const app of ORDER) {
    running[app] = await startReplica(app, releases[app].root);
    balancers[app].backends.push(running[app].port);
  }
  const url = `http://127.0.0.1:${balancers.gateway.port}`;
  // 0.1.0's gateway serves /operator on its public port; today's on its admin port.
  const operator = async (path, body) => {
    for (const base of [`http://127.0.0.1:${running.gateway.adminPort}`, url]) {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).catch(() => undefined);
      if (response?.ok) return response.json();
    }
    throw new Error(`operator ${path} refused`);
  };
  const account = await operator('/operator/accounts', { name: 'Upgrade bench' });
  await operator(`/operator/accounts/${account.id}/rate-limits`, { app: 'sandbox', read_per_second: 1_000_000, write_per_second: 1_000_000 }).catch(() => log('rate limits: not in this gateway release (none to raise)'));
  const { secret: key } = await operator(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' });
  const hookPath = '/upgrade';
  const endpoint = await fetch(`${url}/v1/webhooks`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${receiver.url}${hookPath}`, events: ['customer.created', 'invoice.created'] }) });
  if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${await endpoint.text()}`);

  log(`load: ${CONCURRENCY} workers (create customer, create invoice, read customer, list invoices), ${RETRIES} retries with the same Idempotency-Key`);
  load = startMixedLoad({ url, key, concurrency: CONCURRENCY });
  await sleep(SETTLE_SECONDS * 1000);
  const steps = [];
  for (const app of ORDER) {
    const before = { requests: load.tally.requests, retried: load.tally.retried, failed: load.tally.failures.length };
    const started = Date.now();
    const migrateMs = migrate(app);
    const next = await startReplica(app, undefined);
    balancers[app].backends.push(next.port);
    balancers[app].backends.splice(balancers[app].backends.indexOf(running[app].port), 1);
    const stopStarted = Date.now();
    const exitCode = await running[app].process.kill('SIGTERM');
    const stopMs = Date.now() - stopStarted;
    running[app] = next;
    await sleep(SETTLE_SECONDS * 1000);
    const step = { app, migrateMs, rollMs: Date.now() - started - SETTLE_SECONDS * 1000, stopMs, exitCode, requests: load.tally.requests - before.requests, retried: load.tally.retried - before.retried, failed: load.tally.failures.length - before.failed };
    steps.push(step);
    log(`${app.padEnd(17)} ${releases[app].version} (${releases[app].commit.slice(0, 7)}) → ${JSON.parse(readFileSync(join(ROOT, 'apps', app, 'package.json'), 'utf8')).version} (${HEAD}): migrate ${migrateMs} ms, new replica up and old stopped in ${(step.rollMs / 1000).toFixed(1)} s (SIGTERM → exit ${exitCode} in ${stopMs} ms); ${step.requests} requests meanwhile, ${step.retried} retries, ${step.failed} failed beyond them`);
  }
  const tally = await load.stop();
  load = undefined;
  log(`load stopped; waiting up to ${DRAIN_MS / 1000} s for the last deliveries`);
  let comparison;
  const drainDeadline = Date.now() + DRAIN_MS;
  do {
    await sleep(2_000);
    const events = (await receiver.received(hookPath)).map((request) => JSON.parse(request.body));
    comparison = compareEvents(tally, events);
  } while (Date.now() < drainDeadline && comparison.checks.some((check) => check.lost.length > 0));

  console.log('\n== rolling upgrade under load');
  console.log(`apps upgraded one replica at a time, in order: ${ORDER.join(', ')} (${SETTLE_SECONDS} s of load between two)`);
  console.log(`requests ${tally.requests} (attempts ${tally.attempts}, retried ${tally.retried}${tally.retried ? `: ${Object.entries(tally.retryCauses).map(([cause, count]) => `${count} after ${cause}`).join(', ')}` : ''}); failed beyond ${RETRIES} retries: ${tally.failures.length}`);
  for (const [operation, counts] of Object.entries(tally.byOperation)) console.log(`  ${operation.padEnd(16)} ${String(counts.requests).padStart(6)} requests, ${counts.retried} retries, ${counts.failed} failed`);
  for (const failure of tally.failures.slice(0, 10)) console.log(`  failed: ${failure.at} ${failure.operation} ${failure.route} → ${failure.status} ${failure.body}`);
  for (const check of comparison.checks) {
    console.log(`events ${check.type}: ${check.created} created, ${check.lost.length} lost, ${check.duplicated.length} duplicated${check.lost.length ? ` (e.g. ${check.lost.slice(0, 3).join(', ')})` : ''}`);
  }
  console.log(`resources created twice by a retried request: ${comparison.createdTwice.length}; the same event delivered again (at-least-once, deduped by id): ${comparison.redelivered}`);
  console.log(`load average at the end: ${loadAverage()}`);
  const clean = tally.failures.length === 0 && comparison.createdTwice.length === 0 && comparison.checks.every((check) => check.lost.length === 0 && check.duplicated.length === 0);
  console.log(clean ? 'result: 0 failed requests beyond the retries, 0 lost or duplicated events' : 'result: NOT clean (above)');
  process.exitCode = clean ? 0 : 1;
} finally {
  await load?.stop().catch(() => undefined);
  for (const balancer of Object.values(balancers)) balancer.close?.();
  await Promise.all(Object.values(running).map((replica) => replica.process.kill('SIGTERM')));
  await receiver.stop();
  await mail.stop();
  await infrastructure.stop();
}
