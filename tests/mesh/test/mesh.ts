import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { OUTBOX_RELAY_LOCK_KEY } from '@recur/messaging';
import { createServiceClient, type ServiceClient, webhookDispatchV1 } from '@recur/contracts';
import { type MailCatcher, startMailCatcher } from '@recur/local-infra';
import { type AppName, type AppProcess, connectDatabase, createTestDatabase, freePort, READY_TIMEOUT_MS, startApp, type StartAppOptions, testKafkaBrokers } from '@recur/testing';

/**
 * The time a test file's beforeAll gives startMesh: the mesh's own bound (READY_TIMEOUT_MS, for all
 * seven apps together) and a margin, so a slow start fails with startMesh's error, which names the
 * app and ends with its output, rather than with Jest's hook timeout.
 */
/** The per-key rate limit of the mesh tests' accounts: far above any rate they drive. */
const MESH_RATE_LIMIT_PER_SECOND = 1_000_000;

export const MESH_START_TIMEOUT_MS = READY_TIMEOUT_MS + 30_000;

const SERVICES = ['catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'] as const;
export type ServiceName = (typeof SERVICES)[number];
const peerVariable = (service: ServiceName) => `${service.toUpperCase().replace(/-/g, '_')}_GRPC_ADDR`;

export interface Keys {
  test: string;
  testReadOnly: string;
  sandboxPublishable: string;
  live: string;
  liveReadOnly: string;
  livePublishable: string;
}

export interface Mesh {
  baseUrl: string;
  /** The gateway's admin listener: /metrics and /operator/…. */
  adminUrl: string;
  operatorToken: string;
  apps: Record<AppName, AppProcess>;
  /** Each app's own database, for tests that inspect a service's tables (its outbox, say). */
  databaseUrls: Record<AppName, string>;
  kafkaBrokers: string;
  /** The mesh's topic namespace: `<topicPrefix>.<service>.internal` and `.public`. */
  topicPrefix: string;
  traceDir: string;
  /** The SMTP server invoicing sends its e-mails to (SMTP_URL), one per mesh. */
  mail: MailCatcher;
  webhookDispatch: ServiceClient<typeof webhookDispatchV1.WebhookDispatchService>;
  operator(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  createAccount(name?: string): Promise<{ accountId: string; keys: Keys }>;
  /** One more process of a service (a replica: same database, peers and topics; its own port and trace file). */
  startReplica(service: ServiceName, env?: Record<string, string>): Promise<AppProcess>;
  /**
   * Stops an app (SIGTERM) and starts it again on the same port, database and peers from the build
   * in `root` (another release's checkout: tests/mesh/test/skew.ts), or this checkout's when omitted.
   */
  replace(app: AppName, root?: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Recur as it runs deployed: seven processes, each with its own database, talking gRPC,
 * events through a real Kafka broker. Each mesh uses its own topic namespace so meshes
 * of parallel test files never read each other's events.
 */
export async function startMesh(options: { env?: Partial<Record<AppName, Record<string, string>>>; roots?: Partial<Record<AppName, string>> } = {}): Promise<Mesh> {
  // One bound for the whole mesh: the services boot side by side, then the gateway gets what is left.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const timeLeft = () => Math.max(1, deadline - Date.now());
  const brokers = await testKafkaBrokers();
  const namespace = `mesh-${randomBytes(4).toString('hex')}`;
  const traceDir = mkdtempSync(join(tmpdir(), 'recur-traces-'));
  const common = { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: namespace, METRICS_PORT: '0', GRPC_HOST: '127.0.0.1' };
  const mail = await startMailCatcher();
  const appEnv: Partial<Record<ServiceName, Record<string, string>>> = { invoicing: { SMTP_URL: mail.url } };

  const addresses = {} as Record<ServiceName, string>;
  const databaseUrls = {} as Record<AppName, string>;
  // Each service's whole environment but its port and trace file: replicas start from it.
  const serviceEnv = {} as Record<ServiceName, Record<string, string>>;
  const replicas: AppProcess[] = [];
  // How each app was started, so replace() can start it again from another build.
  const launches = {} as Record<AppName, StartAppOptions>;
  // Ports first: services that call others (subscription → catalog, invoicing) get their addresses at boot.
  const grpcPorts = await Promise.all(SERVICES.map(() => freePort()));
  SERVICES.forEach((service, index) => (addresses[service] = `127.0.0.1:${grpcPorts[index]}`));
  const peerEnv = Object.fromEntries(SERVICES.map((service) => [peerVariable(service), addresses[service]]));
  // The gateway's address is known first: invoices link to its pages, payments send payers there.
  const httpPort = await freePort();
  const adminPort = await freePort();
  const pagesUrl = `http://127.0.0.1:${httpPort}`;
  const pageEnv: Partial<Record<ServiceName, Record<string, string>>> = { invoicing: { PAYMENT_PAGE_URL: `${pagesUrl}/pay` }, payments: { PAYMENT_PAGES_URL: pagesUrl } };
  const starting = await Promise.allSettled(
    SERVICES.map(async (service, index) => {
      const databaseUrl = await createTestDatabase(service.replace(/-/g, '_'));
      const grpcPort = grpcPorts[index];
      databaseUrls[service] = databaseUrl;
      serviceEnv[service] = { ...common, ...peerEnv, ...pageEnv[service], DATABASE_URL: databaseUrl, ...appEnv[service], ...options.env?.[service] };
      launches[service] = { env: { ...serviceEnv[service], GRPC_PORT: String(grpcPort), RECUR_TRACE_FILE: join(traceDir, `${service}.jsonl`) }, ready: { grpcPort } };
      const app = await startApp(service, { ...launches[service], timeoutMs: timeLeft(), root: options.roots?.[service] });
      return [service, app] as const;
    }),
  );
  const started = starting.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  // A mesh that fails to start stops what did start: a test file whose beforeAll threw has no
  // mesh to stop, and processes left running would keep Jest from exiting.
  // The mail catcher too: its listening socket alone keeps Jest from exiting.
  const abandon = async (error: unknown): Promise<never> => {
    await Promise.all(started.map(([, app]) => app.kill('SIGKILL')));
    await mail.stop();
    rmSync(traceDir, { recursive: true, force: true });
    throw error;
  };
  const failed = starting.find((outcome) => outcome.status === 'rejected');
  if (failed) await abandon(failed.reason);
  const operatorToken = randomBytes(16).toString('hex');
  databaseUrls.gateway = await createTestDatabase('gateway');
  launches.gateway = {
    env: {
      ...common,
      DATABASE_URL: databaseUrls.gateway,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPort),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      RECUR_OPERATOR_TOKEN: operatorToken,
      RECUR_TRACE_FILE: join(traceDir, 'gateway.jsonl'),
      // A fixed limit of 64 in flight: every request still takes and gives back its slot, but a
      // test's burst on a busy machine is not shed as overload (the adaptive limit has its own
      // tests: apps/gateway/test/admission-control*.spec.ts; docs/operations/configuration.md#admission-control).
      ADMISSION_MIN_IN_FLIGHT: '64',
      ADMISSION_MAX_IN_FLIGHT: '64',
      ...peerEnv,
      ...options.env?.gateway,
    },
    ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
  };
  const gateway = await startApp('gateway', { ...launches.gateway, timeoutMs: timeLeft(), root: options.roots?.gateway }).catch(abandon);
  const apps = { ...Object.fromEntries(started), gateway } as Record<AppName, AppProcess>;
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;

  const operator = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const createKey = async (accountId: string, app: string, type: string, scope?: string) => {
    const { status, body } = await operator('POST', `/operator/accounts/${accountId}/keys`, { app, type, ...(scope ? { scope } : {}) });
    if (status !== 201) throw new Error(`key creation failed: ${status} ${JSON.stringify(body)}`);
    return body.secret as string;
  };

  return {
    baseUrl,
    adminUrl,
    operatorToken,
    apps,
    databaseUrls,
    kafkaBrokers: brokers,
    topicPrefix: namespace,
    traceDir,
    mail,
    webhookDispatch: createServiceClient(webhookDispatchV1.WebhookDispatchService, addresses['webhook-dispatch']),
    operator,
    async createAccount(name = 'Mesh test') {
      const { body: account } = await operator('POST', '/operator/accounts', { name });
      const accountId = account.id as string;
      // The mesh tests drive hundreds of requests a second with one key: their accounts' rate
      // limits are raised out of the way (the limits have tests of their own, in the gateway).
      for (const app of ['sandbox', 'live']) {
        const raised = await operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app, read_per_second: MESH_RATE_LIMIT_PER_SECOND, write_per_second: MESH_RATE_LIMIT_PER_SECOND });
        if (raised.status !== 200) throw new Error(`rate limits not raised: ${raised.status} ${JSON.stringify(raised.body)}`);
      }
      return {
        accountId,
        keys: {
          test: await createKey(accountId, 'sandbox', 'test'),
          testReadOnly: await createKey(accountId, 'sandbox', 'test', 'read_only'),
          sandboxPublishable: await createKey(accountId, 'sandbox', 'publishable'),
          live: await createKey(accountId, 'live', 'live'),
          liveReadOnly: await createKey(accountId, 'live', 'live', 'read_only'),
          livePublishable: await createKey(accountId, 'live', 'publishable'),
        },
      };
    },
    async startReplica(service, env = {}) {
      const grpcPort = await freePort();
      const trace = join(traceDir, `${service}-replica-${replicas.length + 1}.jsonl`);
      const replica = await startApp(service, { env: { ...serviceEnv[service], GRPC_PORT: String(grpcPort), RECUR_TRACE_FILE: trace, ...env }, ready: { grpcPort } });
      replicas.push(replica);
      return replica;
    },
    async replace(app, root) {
      await apps[app].kill('SIGTERM');
      apps[app] = await startApp(app, { ...launches[app], root });
    },
    async stop() {
      await Promise.all([...Object.values(apps), ...replicas].map((app) => app.kill('SIGTERM')));
      await mail.stop();
      // The spans were read by the tests that wanted them; every mesh leaves its own folder.
      rmSync(traceDir, { recursive: true, force: true });
    },
  };
}

/**
 * A spec file's mesh: started before its tests and stopped after them, with one account.
 * `ready` gets the mesh, the account's keys and a `/v1` client on its sandbox key, and may set up
 * more (awaited within the same start timeout).
 */
export function meshForFile(accountName: string, ready: (started: { mesh: Mesh; keys: Keys; call: ReturnType<typeof api> }) => unknown): void {
  let mesh: Mesh | undefined;
  beforeAll(async () => {
    mesh = await startMesh();
    const { keys } = await mesh.createAccount(accountName);
    await ready({ mesh, keys, call: api(mesh, keys.test) });
  }, MESH_START_TIMEOUT_MS);
  afterAll(async () => {
    mesh?.webhookDispatch.close();
    await mesh?.stop();
  }, 60_000);
}

/** A small HTTP client for `/v1` calls as an integrator makes them. */
export function api(mesh: Mesh, key: string | undefined) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${mesh.baseUrl}${path}`, {
      method,
      headers: { ...(key ? { 'x-api-key': key } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
}

/** Approves a sandbox payment on its payer page (`redirectUrl`), as the payer's browser form post does. */
export async function approveSandboxPayment(mesh: Mesh, redirectUrl: string): Promise<void> {
  const page = await fetch(redirectUrl);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  const answer = await fetch(redirectUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ decision: 'approve', csrf }).toString(),
  });
  if (answer.status !== 303) throw new Error(`approving ${redirectUrl} answered ${answer.status}`);
}

/** Polling and pausing: one helper each for every test (@recur/testing). */
export { eventually, sleep } from '@recur/testing';

/**
 * Pauses a service's outbox relay by holding its advisory lock, while the service keeps
 * writing its outbox: the way to have unpublished rows at a chosen moment. A test using it
 * should assert the pause held, so a relay that stopped taking the lock fails it rather than passing vacuously.
 */
export async function pauseRelay(mesh: Mesh, service: Exclude<AppName, 'gateway'>): Promise<{ resume(): Promise<void> }> {
  const db = await connectDatabase(mesh.databaseUrls[service]);
  await db.query('BEGIN');
  await db.query('SELECT pg_advisory_xact_lock($1::bigint)', [OUTBOX_RELAY_LOCK_KEY]);
  return {
    async resume() {
      await db.query('COMMIT');
      await db.end();
    },
  };
}
