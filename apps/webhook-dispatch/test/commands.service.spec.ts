import * as grpc from '@grpc/grpc-js';
import { webhookDispatchV1 } from '@recur/contracts';
import { eventually, grpcFailure, queryDatabase, type ServiceUnderTest, startServiceUnderTest } from '@recur/testing';

/**
 * webhook-dispatch as its own process on a real PostgreSQL database, through its gRPC surface:
 * every command repeated with the same request id answers its first answer (kept 7 days), and
 * the endpoint limit holds against concurrent creates.
 */
jest.setTimeout(30_000);

const tenant = { accountId: 'acct_webhook_commands', livemode: false };
let service: ServiceUnderTest<typeof webhookDispatchV1.WebhookDispatchService>;
const requestId = (name: string) => `req_${name}_${Date.now()}_${Math.random().toString(36).slice(2)}`;

beforeAll(async () => {
  // Nothing listens on the endpoint's port: deliveries fail, which these tests do not look at.
  service = await startServiceUnderTest('webhook-dispatch', webhookDispatchV1.WebhookDispatchService, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
}, 90_000);

afterAll(() => service?.stop());

const createEndpoint = (id = requestId('create')) =>
  service.client.createEndpoint({ tenant, url: 'http://127.0.0.1:9/hooks', events: ['customer.created'], requestId: id });

describe('WebhookDispatchService repeated commands', () => {
  it('answers a repeated create with the first answer, signing secret included', async () => {
    const id = requestId('create');
    const [first, second] = await Promise.all([createEndpoint(id), createEndpoint(id)]);
    expect(first.endpoint!.secret).toMatch(/^whsec_/);
    expect(second).toEqual(first);
    const { endpoints } = await service.client.listEndpoints({ tenant, page: { limit: 100 } });
    expect(endpoints.filter((endpoint) => endpoint.id === first.endpoint!.id)).toHaveLength(1);
  });

  it('answers a repeated update, test event or delete with the first answer', async () => {
    const { endpoint } = await createEndpoint();
    const update = { tenant, id: endpoint!.id, description: 'first', requestId: requestId('update') };
    const updated = await service.client.updateEndpoint(update);
    await service.client.updateEndpoint({ tenant, id: endpoint!.id, description: 'second' });
    expect(await service.client.updateEndpoint(update)).toEqual(updated);

    const test = { tenant, id: endpoint!.id, requestId: requestId('test') };
    const sent = await service.client.sendTestEvent(test);
    expect((await service.client.sendTestEvent(test)).delivery!.id).toBe(sent.delivery!.id);
    const { deliveries } = await service.client.listDeliveries({ tenant, endpointId: endpoint!.id, page: { limit: 100 } });
    expect(deliveries.map((delivery) => delivery.id)).toEqual([sent.delivery!.id]);

    const remove = { tenant, id: endpoint!.id, requestId: requestId('delete') };
    const deleted = await service.client.deleteEndpoint(remove);
    expect(await service.client.deleteEndpoint(remove)).toEqual(deleted);
    // Without the request id it runs again: the endpoint is gone.
    expect(await grpcFailure(service.client.deleteEndpoint({ tenant, id: endpoint!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});

describe('the endpoint limit under concurrency', () => {
  it('lets at most 16 of 24 concurrent creates in one app succeed; the others answer endpoint_limit_reached', async () => {
    const app = { accountId: `acct_limit_${Date.now()}`, livemode: false };
    const create = (index: number) => {
      const call = service.client.createEndpoint({ tenant: app, url: `http://127.0.0.1:9/hooks/${index}`, events: ['customer.created'] });
      return call.then(() => 'created' as const, () => grpcFailure(call));
    };
    const outcomes = await Promise.all(Array.from({ length: 24 }, (_, index) => create(index)));
    expect(outcomes.filter((outcome) => outcome === 'created')).toHaveLength(16);
    expect(outcomes.filter((outcome) => outcome !== 'created')).toEqual(Array(8).fill({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'endpoint_limit_reached', param: undefined }));
    expect((await service.client.listEndpoints({ tenant: app, page: { limit: 100 } })).endpoints).toHaveLength(16);
  });
});

describe('command answers expire', () => {
  // Last in the file: it restarts the service.
  it('deletes answers older than 7 days (the service runs the purge job) and keeps younger ones', async () => {
    const answers = async () =>
      (await queryDatabase<{ request_id: string }>(service.databaseUrl, "SELECT request_id FROM command_results WHERE account_id = 'acct_purge' ORDER BY request_id")).map((row) => row.request_id);
    await queryDatabase(
      service.databaseUrl,
      `INSERT INTO command_results (account_id, livemode, rpc, request_id, created_at) VALUES
         ('acct_purge', false, 'recur.webhook_dispatch.v1.CreateEndpoint', 'req_week_old', now() - interval '7 days 1 minute'),
         ('acct_purge', false, 'recur.webhook_dispatch.v1.CreateEndpoint', 'req_day_old', now() - interval '1 day')`,
    );
    // The purge looks at start (then when the oldest answer expires, or once a minute).
    await service.app.kill('SIGTERM');
    await service.app.restart();
    await eventually(async () => !(await answers()).includes('req_week_old'), 10_000, 'the week-old answer purged');
    expect(await answers()).toEqual(['req_day_old']);
  }, 60_000);
});
