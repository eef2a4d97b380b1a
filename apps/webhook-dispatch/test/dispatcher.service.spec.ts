import { webhookDispatchV1 } from '@recur/contracts';
import { eventually, freePort, queryDatabase, type ServiceUnderTest, startApp, startServiceUnderTest, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { Client } from 'pg';

/**
 * The dispatcher as its own process on a real PostgreSQL database: deliveries claimed many at a
 * time and their outcomes written in groups keep the promises of one at a time — a delivery
 * whose outcome was not written when the process died is sent again, and two dispatchers on
 * one database send each delivery once.
 */
jest.setTimeout(90_000);

/** A short receiver timeout keeps the lease short: 2 × 1 s + 15 s. */
const TIMEOUT_MS = 1_000;
const tenant = { accountId: 'acct_dispatcher', livemode: false };
let service: ServiceUnderTest<typeof webhookDispatchV1.WebhookDispatchService>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  service = await startServiceUnderTest('webhook-dispatch', webhookDispatchV1.WebhookDispatchService, {
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  });
}, 90_000);

afterAll(async () => {
  await service?.stop();
  await receiver?.stop();
});

const createEndpoint = async (path: string) =>
  (await service.client.createEndpoint({ tenant, url: `${receiver.url}${path}`, events: ['customer.created'] })).endpoint!;

const deliveryRow = async (id: string) =>
  (await queryDatabase<{ status: string; attempt_count: number }>(service.databaseUrl, 'SELECT status, attempt_count FROM deliveries WHERE id = $1', [id]))[0];

const attemptsOf = (id: string) =>
  queryDatabase<{ number: number; status_code: number | null }>(service.databaseUrl, 'SELECT number, status_code FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number', [id]);

describe('the dispatcher', () => {
  it('sends a delivery again when it was killed after the receiver answered and before the outcome was written', async () => {
    const endpoint = await createEndpoint('/hooks/crash');
    // Outcomes are written to delivery_attempts: while this lock is held, that write waits.
    const blocker = new Client({ connectionString: service.databaseUrl });
    await blocker.connect();
    let deliveryId: string;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE delivery_attempts IN SHARE MODE');
      deliveryId = (await service.client.sendTestEvent({ tenant, id: endpoint.id })).delivery!.id;
      await eventually(async () => (await receiver.received('/hooks/crash')).length === 1, 20_000, 'the first arrival');
      const waitingWrite = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%delivery_attempts%'`;
      // Asked on another connection: inside the blocker's transaction pg_stat_activity is a snapshot
      // taken at its first read, so a write that starts waiting after that read would never show.
      await eventually(async () => (await queryDatabase(service.databaseUrl, waitingWrite)).length === 1, 10_000, 'the outcome write waiting');
      await service.app.kill('SIGKILL');
      // The dead process's write never commits (PostgreSQL would otherwise run it once the lock frees).
      await queryDatabase(service.databaseUrl, `SELECT pg_terminate_backend(pid) FROM (${waitingWrite}) AS waiting`);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    // The receiver answered 200, yet nothing says so: the delivery is still pending, leased.
    expect(await deliveryRow(deliveryId)).toEqual({ status: 'pending', attempt_count: 0 });
    expect(await attemptsOf(deliveryId)).toEqual([]);

    await service.app.restart();
    // Once the dead worker's lease lapses, the delivery is sent again, with the same event id.
    const arrivals = await eventually(async () => {
      const got = await receiver.received('/hooks/crash');
      return got.length >= 2 ? got : undefined;
    }, 40_000, 'the second arrival');
    expect(new Set(arrivals.map((arrival) => JSON.parse(arrival.body).id)).size).toBe(1);
    await eventually(async () => (await deliveryRow(deliveryId)).status === 'succeeded', 10_000, 'the outcome written');
    expect(await attemptsOf(deliveryId)).toEqual([{ number: 1, status_code: 200 }]);
  });

  it('sends each delivery once when two dispatchers share the database', async () => {
    const endpoint = await createEndpoint('/hooks/shared');
    const grpcPort = await freePort();
    const second = await startApp('webhook-dispatch', {
      env: { DATABASE_URL: service.databaseUrl, GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort), METRICS_PORT: '0', KAFKA_BROKERS: '', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
      ready: { grpcPort },
    });
    try {
      // The consumer's work, done by hand: 200 events and their deliveries committed at once,
      // so both dispatchers wake on the same NOTIFY and claim at the same moment.
      const count = 200;
      const ids = Array.from({ length: count }, (_, i) => `shared_${i}_${Date.now()}`);
      await queryDatabase(service.databaseUrl, `
        WITH events AS (
          INSERT INTO events (id, account_id, livemode, type, created, data)
          SELECT 'evt_' || id, $2, false, 'customer.created', 1700000000, '{}'::jsonb FROM unnest($1::text[]) AS id
        ), queued AS (
          INSERT INTO deliveries (id, account_id, livemode, endpoint_id, event_id, event_type, status, next_attempt_at)
          SELECT 'whd_' || id, $2, false, $3, 'evt_' || id, 'customer.created', 'pending', now() - interval '1 second' FROM unnest($1::text[]) AS id
        )
        SELECT pg_notify('recur_deliveries', '')`, [ids, tenant.accountId, endpoint.id]);
      await eventually(async () => {
        const [row] = await queryDatabase<{ n: number }>(service.databaseUrl, `SELECT count(*)::int AS n FROM deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`, [endpoint.id]);
        return row.n === count;
      }, 30_000, 'every delivery succeeded');
      const eventIds = (await receiver.received('/hooks/shared')).map((arrival) => JSON.parse(arrival.body).id as string);
      expect(eventIds).toHaveLength(count);
      expect(new Set(eventIds).size).toBe(count);
      const [attempts] = await queryDatabase<{ n: number }>(service.databaseUrl, 'SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = ANY($1)', [ids.map((id) => `whd_${id}`)]);
      expect(attempts.n).toBe(count);
    } finally {
      await second.kill('SIGTERM');
    }
  });
});
