import * as grpc from '@grpc/grpc-js';
import { webhookDispatchV1 } from '@recur/contracts';
import { grpcFailure, type ServiceUnderTest, startServiceUnderTest } from '@recur/testing';

/**
 * webhook-dispatch as its own process on a real PostgreSQL database, through its gRPC surface:
 * every command repeated with the same request id answers its first answer.
 */
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
