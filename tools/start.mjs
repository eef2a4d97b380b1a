#!/usr/bin/env node
// `npm start`: the whole of Recur on one machine, in one process. An embedded PostgreSQL
// (data kept in .data/ between starts) holds one database per service; all seven apps
// run here with their own gRPC ports. They call each other in-process (`inProcessCalls`: the
// same Nest handlers, without the loopback gRPC hop; RECUR_IN_PROCESS_CALLS=false turns it off);
// outside callers use the ports.
// Events flow through the in-process bus, or through Kafka when KAFKA_BROKERS is set.
// The first start creates an account and prints its sandbox keys.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { buildAll, ensureInstalled, ROOT } from './bootstrap.mjs';
import { mailDir, postgresDataDir } from './local-data.mjs';

const started = Date.now();
// A person at a terminal: readable lines, and only warnings and errors once running
// (deployed apps keep JSON at info). Set before any logger exists.
process.env.LOG_FORMAT ??= 'pretty';
process.env.LOG_LEVEL ??= 'warn';
const DATA_DIR = process.env.RECUR_DATA_DIR ?? join(ROOT, '.data');
const HTTP_PORT = Number(process.env.PORT ?? 8080);
const PG_PORT = Number(process.env.RECUR_PG_PORT ?? 54329);
/** The gateway's admin listener (/metrics, /operator/…), on 127.0.0.1 only: never the public port. */
const ADMIN_PORT = Number(process.env.ADMIN_PORT ?? 9464);
/** The local mail catcher's SMTP port; invoice e-mails land in MAIL_DIR as .eml files. */
const SMTP_PORT = Number(process.env.RECUR_SMTP_PORT ?? 2525);
const MAIL_DIR = mailDir(DATA_DIR);
/** `false` makes the apps call each other over loopback gRPC, as deployed apps do (to compare, or to watch the wire). */
const IN_PROCESS_CALLS = process.env.RECUR_IN_PROCESS_CALLS !== 'false';
/** The six services listen on consecutive ports from here, on 127.0.0.1. */
const GRPC_BASE_PORT = Number(process.env.RECUR_GRPC_BASE_PORT ?? 50051);

/**
 * Every port this start listens on, with the variable that moves it. All are probed before
 * anything starts, so one in use is reported at once; a bind failing later came as a stack trace
 * after PostgreSQL and the apps had started.
 */
const HTTP_HOST = process.env.HTTP_HOST ?? '127.0.0.1';
const LISTENERS = [
  { variable: 'PORT', what: 'the HTTP API', host: HTTP_HOST, ports: [HTTP_PORT] },
  // A postmaster.pid may be a server orphaned by a kill -9 of this process, which the start stops
  // (startEmbeddedPostgres); PostgreSQL itself then reports a port that is still taken.
  { variable: 'RECUR_PG_PORT', what: 'the embedded PostgreSQL', host: '127.0.0.1', ports: existsSync(join(postgresDataDir(DATA_DIR), 'postmaster.pid')) ? [] : [PG_PORT] },
  { variable: 'ADMIN_PORT', what: 'the admin listener', host: '127.0.0.1', ports: [ADMIN_PORT] },
  ...(process.env.SMTP_URL ? [] : [{ variable: 'RECUR_SMTP_PORT', what: 'the local mail catcher', host: '127.0.0.1', ports: [SMTP_PORT] }]),
  { variable: 'RECUR_GRPC_BASE_PORT', what: 'the six services (consecutive gRPC ports)', host: '127.0.0.1', ports: [0, 1, 2, 3, 4, 5].map((offset) => GRPC_BASE_PORT + offset) },
];

/** Why `port` cannot be listened on at `host` (EADDRINUSE, EACCES, …), or undefined when it can. */
function bindError(host, port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

{
  const problems = [];
  const claimed = new Map();
  for (const { variable, what, host, ports } of LISTENERS) {
    for (const port of ports) {
      const other = claimed.get(port);
      if (other) {
        problems.push(`Port ${port} is given to both ${other} and ${variable}: set one of them to another port.`);
        continue;
      }
      claimed.set(port, variable);
      const error = await bindError(host, port);
      if (!error) continue;
      const reason = error.code === 'EADDRINUSE' ? 'is already in use' : `cannot be listened on (${error.code ?? error.message})`;
      problems.push(`Port ${port} on ${host} (${what}) ${reason}: stop what holds it, or set ${variable} to another port.`);
    }
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(1);
  }
}

ensureInstalled({ quiet: true });
if (process.env.RECUR_SKIP_BUILD !== '1') buildAll({ quiet: true });

/** Runs one start-up step with a progress line on stderr; the banner stays the last thing printed. */
async function step(progress, work) {
  const stepStarted = Date.now();
  process.stderr.write(`${progress} `);
  try {
    const result = await work();
    process.stderr.write(`done (${((Date.now() - stepStarted) / 1000).toFixed(1)} s)\n`);
    return result;
  } catch (error) {
    process.stderr.write('failed\n');
    throw error;
  }
}

const require = createRequire(import.meta.url);
const { startTelemetry, JsonLogger } = require('@recur/telemetry');
startTelemetry({ serviceName: 'recur' });
const { startEmbeddedPostgres, startMailCatcher } = require('@recur/local-infra');

const log = new JsonLogger('recur');
// Local development: webhook receivers usually run on this machine.
process.env.WEBHOOK_ALLOW_PRIVATE_URLS ??= 'true';
// Read (and refused when below 1 hour) before anything starts, as a deployed service does.
const outboxRetentionHours = (() => {
  try {
    return require('@recur/service-host').outboxRetentionHoursFromEnv();
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
})();

const SERVICES = [
  { app: 'catalog', start: 'startCatalogService' },
  { app: 'subscription', start: 'startSubscriptionService' },
  { app: 'invoicing', start: 'startInvoicingService' },
  { app: 'payments', start: 'startPaymentsService' },
  { app: 'usage-metering', start: 'startUsageMeteringService' },
  { app: 'webhook-dispatch', start: 'startWebhookDispatchService' },
].map((service, index) => ({ ...service, port: GRPC_BASE_PORT + index }));
const databaseName = (app) => `recur_${app.replace(/-/g, '_')}`;
// Services that call peers (invoicing asks subscription for customers) read the peers'
// addresses from the environment, as they do when deployed.
for (const { app, port } of SERVICES) process.env[`${app.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`] ??= `127.0.0.1:${port}`;

function operatorToken() {
  if (process.env.RECUR_OPERATOR_TOKEN) return process.env.RECUR_OPERATOR_TOKEN;
  const file = join(DATA_DIR, 'operator-token');
  if (!existsSync(file)) writeFileSync(file, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

async function operator(token, method, path, body) {
  const response = await fetch(`http://127.0.0.1:${ADMIN_PORT}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * First start only: an account with its sandbox keys and one live key (to see that the apps
 * are apart), printed once; only their hashes are stored.
 */
async function ensureLocalAccount(token) {
  const file = join(DATA_DIR, 'local-account.json');
  if (existsSync(file)) return { account: JSON.parse(readFileSync(file, 'utf8')), keys: undefined };
  const account = await operator(token, 'POST', '/operator/accounts', { name: 'Local development' });
  const keys = [];
  for (const key of [
    { app: 'sandbox', type: 'test', name: 'sandbox secret' },
    { app: 'sandbox', type: 'test', scope: 'read_only', name: 'sandbox read-only' },
    { app: 'sandbox', type: 'publishable', name: 'sandbox publishable' },
    { app: 'live', type: 'live', name: 'live secret' },
  ]) keys.push(await operator(token, 'POST', `/operator/accounts/${account.id}/keys`, key));
  writeFileSync(file, `${JSON.stringify({ id: account.id, name: account.name }, null, 2)}\n`);
  return { account, keys };
}

/**
 * The local account's developer portal sign-in, made once (also for a .data/ from before the
 * portal existed). Only the password's argon2 hash is in the database; like the operator token,
 * the sign-in is kept in .data/ (mode 600) so every banner can show it on this machine.
 */
async function ensurePortalSignIn(token, accountId) {
  const file = join(DATA_DIR, 'portal-sign-in.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const password = randomBytes(12).toString('base64url');
  const user = await operator(token, 'POST', `/operator/accounts/${accountId}/users`, { email: 'developer@recur.localhost', password });
  const signIn = { email: user.email, password };
  writeFileSync(file, `${JSON.stringify(signIn, null, 2)}\n`, { mode: 0o600 });
  return signIn;
}

/**
 * What has started, stopped in reverse order on Ctrl-C, SIGTERM or a failed start: the gateway
 * stops taking HTTP first, each service drains (health, relay, consumers, workers, then its
 * pools), and PostgreSQL stops last, once no app holds a connection to it.
 */
const running = [];
/** A part that has not stopped after this long is left behind (and the exit code says so), so one stuck part cannot keep the rest running. */
const STOP_PART_TIMEOUT_MS = 20_000;
let stopping = false;
/** The in-process bus the apps share (none with Kafka): opened once all have started, closed first on stop. */
let inProcessBus;
/** main(): a signal during the start waits for the part being started, which main() then stops starting after. */
let startup = Promise.resolve();
async function stopAll(reason, exitCode) {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`\nStopping (${reason})…\n`);
  await startup.catch(() => undefined);
  // Publishes held for the bus to open (a start cut short) or still to come fail now, so the
  // apps' relays stop at once and keep those rows for the next start; deliveries in flight finish.
  await inProcessBus?.close();
  let code = exitCode;
  for (const part of running.reverse()) {
    let timer;
    const stopped = await Promise.race([
      part.stop().then(() => true, (error) => {
        log.error(error);
        return false;
      }),
      new Promise((resolve) => (timer = setTimeout(() => resolve(false), STOP_PART_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      process.stderr.write(`${part.name} did not stop cleanly\n`);
      code = 1;
    }
  }
  process.exit(code);
}
process.on('SIGINT', () => stopAll('SIGINT', 0));
process.on('SIGTERM', () => stopAll('SIGTERM', 0));

/** Records a started part for stopAll; false when a signal came meanwhile, so main() starts nothing more. */
function keepRunning(name, part) {
  running.push({ name, stop: () => part.stop() });
  return !stopping;
}

async function main() {
  mkdirSync(DATA_DIR, { recursive: true });
  const firstStart = !existsSync(join(postgresDataDir(DATA_DIR), 'PG_VERSION'));
  const postgres = await step(
    firstStart ? `Starting PostgreSQL (creating the cluster in ${DATA_DIR}/postgres)…` : 'Starting PostgreSQL…',
    () => startEmbeddedPostgres({ dataDir: postgresDataDir(DATA_DIR), port: PG_PORT, persistent: true }),
  );
  if (!keepRunning('PostgreSQL', postgres)) return;

  // Invoice e-mails go to a local catcher unless SMTP_URL names a real server.
  let mailNote = `sent through ${process.env.SMTP_URL?.replace(/\/\/[^@/]*@/, '//…@')}`;
  if (!process.env.SMTP_URL) {
    const catcher = await step('Starting the mail catcher…', () => startMailCatcher({
      port: SMTP_PORT,
      dir: MAIL_DIR,
      onMessage: (mail) => process.stderr.write(`Mail to ${mail.envelope.to.join(', ')}: "${mail.parsed.subject}" saved as ${mail.file}\n`),
    }));
    if (!keepRunning('the mail catcher', catcher)) return;
    process.env.SMTP_URL = catcher.url;
    mailNote = `caught by a local SMTP server (${catcher.url}), each message saved in ${MAIL_DIR}/ as .eml`;
  }

  const { inProcessEventBus } = require('@recur/messaging');
  const bus = process.env.KAFKA_BROKERS ? undefined : inProcessEventBus;
  inProcessBus = bus;
  const peers = {};
  // The subscription service calls the catalog and invoicing; in one process its config is this environment.
  const portOf = (name) => SERVICES.find(({ app }) => app === name).port;
  process.env.CATALOG_GRPC_ADDR = `127.0.0.1:${portOf('catalog')}`;
  process.env.INVOICING_GRPC_ADDR = `127.0.0.1:${portOf('invoicing')}`;
  // Invoices link to the gateway's pages, and payments send payers there: on this port.
  process.env.PAYMENT_PAGE_URL ??= `http://127.0.0.1:${HTTP_PORT}/pay`;
  process.env.PAYMENT_PAGES_URL ??= `http://127.0.0.1:${HTTP_PORT}`;
  const servicesStarted = await step(`Starting ${SERVICES.map(({ app }) => app).join(', ')} (migrations included)…`, async () => {
    for (const { app, start, port } of SERVICES) {
      await postgres.ensureDatabase(databaseName(app));
      const module = require(join(ROOT, 'apps', app, 'dist', 'app.js'));
      const service = await module[start]({ databaseUrl: postgres.urlFor(databaseName(app)), grpcHost: '127.0.0.1', grpcPort: port, metricsPort: 0, migrateOnStart: true, inProcessCalls: IN_PROCESS_CALLS, outboxRetentionHours }, bus);
      if (!keepRunning(app, service)) return false;
      peers[app] = `127.0.0.1:${port}`;
    }
    return true;
  });
  if (!servicesStarted) return;
  // Every app has subscribed: the relays' publishing, held until now, starts (InProcessEventBus).
  bus?.open();
  await postgres.ensureDatabase(databaseName('gateway'));
  const token = operatorToken();
  const { startGateway } = require(join(ROOT, 'apps', 'gateway', 'dist', 'app.js'));
  // The gateway reads its configuration as a deployed one does, from the environment with this
  // process's addresses filled in, so a setting it gains (its public page URLs, its rate limits'
  // defaults, say) has its default here too, and SALES_LINK_URL, CUSTOMER_PORTAL_URL,
  // RATE_LIMIT_*_PER_SECOND and the like are honoured. The admin listener stays on this machine.
  const { gatewayConfigFromEnv } = require(join(ROOT, 'apps', 'gateway', 'dist', 'config.js'));
  const gatewayConfig = gatewayConfigFromEnv({
    ...process.env,
    HTTP_HOST,
    HTTP_PORT: String(HTTP_PORT),
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: String(ADMIN_PORT),
    DATABASE_URL: postgres.urlFor(databaseName('gateway')),
    RECUR_OPERATOR_TOKEN: token,
    MIGRATE_ON_START: 'true',
    CATALOG_GRPC_ADDR: peers.catalog,
    SUBSCRIPTION_GRPC_ADDR: peers.subscription,
    INVOICING_GRPC_ADDR: peers.invoicing,
    PAYMENTS_GRPC_ADDR: peers.payments,
    USAGE_METERING_GRPC_ADDR: peers['usage-metering'],
    WEBHOOK_DISPATCH_GRPC_ADDR: peers['webhook-dispatch'],
  });
  const gateway = await step('Starting the gateway…', () => startGateway(gatewayConfig));
  if (!keepRunning('the gateway', gateway)) return;

  const { account, keys } = await ensureLocalAccount(token);
  const signIn = await ensurePortalSignIn(token, account.id);
  const lines = [
    '',
    `Recur is running: http://127.0.0.1:${HTTP_PORT}/v1   (ready in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    `  OpenAPI        http://127.0.0.1:${HTTP_PORT}/openapi.json`,
    `  Admin          http://127.0.0.1:${ADMIN_PORT}   /metrics and /operator/… (this machine only; ADMIN_PORT moves it)`,
    `  E-mail         ${mailNote}`,
    `  Events         ${process.env.KAFKA_BROKERS ? `Kafka at ${process.env.KAFKA_BROKERS}` : 'in-process bus (set KAFKA_BROKERS to use Kafka)'}`,
    `  Account        ${account.id}`,
    `  Portal         http://127.0.0.1:${HTTP_PORT}/portal   sign in as ${signIn.email} / ${signIn.password}`,
    `  Operator token ${token}   (Authorization: Bearer … on the admin port's /operator/…; stored in ${join(DATA_DIR, 'operator-token')})`,
  ];
  if (keys) {
    lines.push('', 'Keys (shown this once; only their hashes are stored):');
    for (const key of keys) lines.push(`  ${key.name.padEnd(20)} ${key.secret}`);
    lines.push('', `Try: curl -s -H "x-api-key: ${keys[0].secret}" -H 'content-type: application/json' \\`, `       -d '{"name":"Ada","email":"ada@example.com"}' http://127.0.0.1:${HTTP_PORT}/v1/customers`);
  } else {
    lines.push('', 'Keys were printed on the first start. Create more with:', `  npx recur-admin keys create --account ${account.id} --app sandbox --type test`);
  }
  lines.push('', `Ctrl-C stops everything; data stays in ${DATA_DIR} for the next start.`, '');
  process.stdout.write(`${lines.join('\n')}\n`);
}

startup = main();
startup.catch((error) => {
  log.error(error);
  return stopAll('the start failed', 1);
});
