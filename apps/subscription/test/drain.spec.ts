import * as grpc from '@grpc/grpc-js';
import { subscriptionV1 } from '@recur/contracts';
import { connectDatabase, queryDatabase, sleep, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { service as healthService } from 'grpc-health-check';

/**
 * The SIGTERM drain of a service (libs/service-host), seen from outside the process: health
 * turns NOT_SERVING while a call is still running, the relay stops, the running call
 * completes, and the process exits 0. The call is held in flight on purpose: the test locks
 * the customers table, so the service's first read waits until the test lets it go.
 */
const tenant = { accountId: 'acct_drain', livemode: false };
let service: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;

beforeAll(async () => {
  // Peers are not called here: nothing in this test reaches the catalog or invoicing.
  service = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
}, 90_000);

afterAll(async () => {
  await service?.stop();
});

type HealthStatus = 'SERVING' | 'NOT_SERVING' | string;

/** grpc.health.v1 Watch on the service: every status it pushes, as it pushes it. */
function watchHealth(port: number): { statuses: HealthStatus[]; cancel(): void } {
  const Client = grpc.makeGenericClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'Health');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const statuses: HealthStatus[] = [];
  const stream = (client as unknown as { watch(request: { service: string }): grpc.ClientReadableStream<{ status: HealthStatus | number }> }).watch({ service: '' });
  stream.on('data', (response) => statuses.push(response.status === 1 ? 'SERVING' : response.status === 2 ? 'NOT_SERVING' : String(response.status)));
  stream.on('error', () => undefined); // cancelled below
  return {
    statuses,
    cancel() {
      stream.cancel();
      client.close();
    },
  };
}

/** Connections listening for outbox wake-ups: the relay's own (the service has no other). */
async function relayListeners(): Promise<number> {
  const rows = await queryDatabase<{ n: number }>(service.databaseUrl, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN recur_outbox'");
  return rows[0].n;
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

it('drains on SIGTERM: NOT_SERVING first, the relay stops, the running call completes, exit 0', async () => {
  const health = watchHealth(service.grpcPort);
  const table = await connectDatabase(service.databaseUrl);
  try {
    await until(() => health.statuses.at(-1) === 'SERVING', 'health SERVING');
    await table.query('BEGIN');
    await table.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
    let settled = false;
    const running = service.client.createCustomer({ tenant, name: 'Drained', email: 'drained@example.com', requestId: 'req_drain' }).finally(() => (settled = true));
    // Watched from another connection: inside the locking transaction pg_stat_activity is a snapshot.
    await until(async () => {
      const waiting = await queryDatabase<{ n: number }>(service.databaseUrl, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      return waiting[0].n === 1;
    }, 'the call to wait on the table');

    expect(await relayListeners()).toBe(1);
    const exited = service.app.kill('SIGTERM');
    await until(() => health.statuses.at(-1) === 'NOT_SERVING', 'health NOT_SERVING');
    expect(settled).toBe(false);
    // The relay stops before the server finishes its calls: its LISTEN connection closes.
    await until(async () => (await relayListeners()) === 0, 'the relay to stop');
    expect(settled).toBe(false);
    await table.query('COMMIT');

    const { customer } = await running;
    expect(customer).toMatchObject({ name: 'Drained', email: 'drained@example.com' });
    health.cancel();
    expect(await exited).toBe(0);

    // The call's events (the internal and the public one) were committed after the relay
    // stopped: they wait, unpublished, in the outbox.
    const outbox = () => queryDatabase<{ published_at: Date | null }>(service.databaseUrl, 'SELECT published_at FROM outbox_events WHERE key = $1 ORDER BY seq', [customer!.id]);
    expect(await outbox()).toEqual([{ published_at: null }, { published_at: null }]);
    expect(service.app.output()).not.toMatch(/"level":"error"/);

    // Nothing is lost: the next start publishes it.
    await service.app.restart();
    await until(async () => (await outbox()).every((row) => row.published_at !== null), 'the events published after the restart');
    expect((await service.client.getCustomer({ tenant, id: customer!.id })).customer?.id).toBe(customer!.id);
  } finally {
    health.cancel();
    await table.end().catch(() => undefined);
  }
}, 60_000);
