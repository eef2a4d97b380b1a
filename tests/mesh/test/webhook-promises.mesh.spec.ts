import { queryDatabase, readTopic, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { api, eventually, type Keys, type Mesh, pauseRelay, sleep, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * The promises of docs/webhooks.md about events and webhooks that need the whole mesh: the endpoint limit,
 * pending deliveries stopping when an endpoint is disabled or deleted, one resource's
 * events in order on the topic, and the URL policy re-checked at delivery time.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Webhook promises'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

async function createEndpoint(url: string, events = ['customer.created'], key = keys.test) {
  const response = await api(mesh, key)('POST', '/v1/webhooks', { url, events });
  expect(response.status).toBe(201);
  return response.body as { id: string };
}

async function createCustomer(name = 'Hooked') {
  const response = await call('POST', '/v1/customers', { name, email: 'hooked@example.com' });
  expect(response.status).toBe(201);
  return response.body as { id: string };
}

/** The endpoint's deliveries and their attempts, from webhook-dispatch's own tables (a deleted endpoint has no API). */
async function storedDeliveries(endpointId: string) {
  return queryDatabase<{ status: string; attempts: number[] }>(
    mesh.databaseUrls['webhook-dispatch'],
    `SELECT d.status, coalesce(array_agg(a.status_code ORDER BY a.number) FILTER (WHERE a.id IS NOT NULL), '{}') AS attempts
     FROM deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.endpoint_id = $1 GROUP BY d.id`,
    [endpointId],
  );
}

describe('webhook endpoints', () => {
  it("refuse a 17th endpoint in one app with 409 endpoint_limit_reached; a deleted one frees its place, the other app's endpoints do not count", async () => {
    const { keys: own } = await mesh.createAccount('Endpoint limit');
    const limited = api(mesh, own.test);
    const endpoints = [];
    for (let i = 0; i < 16; i++) endpoints.push(await createEndpoint(`${receiver.url}/hooks/limit-${i}`, ['invoice.paid'], own.test));
    const seventeenth = await limited('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/limit-16`, events: ['invoice.paid'] });
    expect(seventeenth.status).toBe(409);
    expect(seventeenth.body.error).toMatchObject({ type: 'invalid_request_error', code: 'endpoint_limit_reached' });
    expect((await limited('GET', '/v1/webhooks?limit=100')).body.total).toBe(16);

    expect((await api(mesh, own.live)('POST', '/v1/webhooks', { url: 'https://example.com/hook', events: ['invoice.paid'] })).status).toBe(201);
    expect((await limited('DELETE', `/v1/webhooks/${endpoints[0].id}`)).status).toBe(200);
    expect((await limited('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/limit-16`, events: ['invoice.paid'] })).status).toBe(201);
  });
});

describe('pending deliveries', () => {
  /**
   * The receiver holds the first attempt unanswered, so the endpoint is disabled or deleted
   * while that attempt is provably in flight and its retries are still to come. Afterwards
   * the attempt fails (500); retries would follow 1 s and 2 s later.
   */
  async function stopWhileInFlight(path: string, stop: (endpointId: string) => Promise<number>) {
    const endpoint = await createEndpoint(`${receiver.url}${path}?mode=hold`);
    await createCustomer();
    await eventually(async () => (await receiver.received(path)).length === 1, 30_000, 'the first attempt to arrive');
    try {
      expect(await stop(endpoint.id)).toBe(200);
      // Stopped in the same transaction as the endpoint change.
      expect((await storedDeliveries(endpoint.id)).map((delivery) => delivery.status)).toEqual(['failed']);
    } finally {
      expect(await receiver.release(path)).toBe(1);
    }
    await eventually(async () => (await storedDeliveries(endpoint.id))[0]?.attempts.length === 1, 10_000, 'the attempt recorded');
    // Past the slots of attempts 2 (1 s) and 3 (2 s later): nothing more arrives.
    await sleep(4_000);
    expect(await receiver.received(path)).toHaveLength(1);
    expect(await storedDeliveries(endpoint.id)).toEqual([{ status: 'failed', attempts: [500] }]);
  }

  it('stop when the endpoint is disabled: no further attempts arrive and the delivery is failed', async () => {
    await stopWhileInFlight('/hooks/disable-me', async (id) => (await call('PATCH', `/v1/webhooks/${id}`, { status: 'disabled' })).status);
  }, 60_000);

  it('stop when the endpoint is deleted', async () => {
    await stopWhileInFlight('/hooks/delete-me', async (id) => (await call('DELETE', `/v1/webhooks/${id}`)).status);
  }, 60_000);
});

describe('event order', () => {
  it("keeps one customer's events in order on its topic: created, then every update as it was made", async () => {
    const relay = await pauseRelay(mesh, 'subscription');
    let customerId: string;
    const names = ['v1', 'v2', 'v3', 'v4', 'v5', 'v6'];
    try {
      customerId = (await createCustomer('v0')).id;
      for (const name of names) expect((await call('PATCH', `/v1/customers/${customerId}`, { name })).status).toBe(200);
      // The pause held: all seven wait in the outbox and go out in one batch.
      const unpublished = await queryDatabase<{ count: string }>(mesh.databaseUrls.subscription, "SELECT count(*) FROM outbox_events WHERE key = $1 AND published_at IS NULL AND topic LIKE '%.public'", [customerId]);
      expect(Number(unpublished[0].count)).toBe(7);
    } finally {
      await relay.resume();
    }
    const topic = `${mesh.topicPrefix}.subscription.public`;
    const messages = await eventually(async () => {
      const own = (await readTopic(mesh.kafkaBrokers, topic)).filter((message) => message.key === customerId);
      return own.length >= 7 ? own : undefined;
    }, 30_000, 'seven events on the topic');
    expect(new Set(messages.map((message) => message.partition)).size).toBe(1);
    const inOffsetOrder = [...messages].sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)));
    const events = inOffsetOrder.map((message) => JSON.parse(message.value));
    expect(events.map((event) => [event.type, event.data.object.name])).toEqual([['customer.created', 'v0'], ...names.map((name) => ['customer.updated', name])]);
    expect(events.slice(1).map((event) => event.data.previous_attributes.name)).toEqual(['v0', ...names.slice(0, -1)]);
  }, 60_000);
});

describe('URL policy at delivery time', () => {
  it('refuses to deliver to a name that resolves to a private address once private URLs are not allowed', async () => {
    const path = '/hooks/rebound';
    const port = new URL(receiver.url).port;
    // Created while the operator allowed private URLs; then the operator turns them off.
    const endpoint = await createEndpoint(`http://localhost:${port}${path}`);
    await mesh.apps['webhook-dispatch'].kill('SIGTERM');
    await mesh.apps['webhook-dispatch'].restart({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    try {
      await createCustomer();
      const [delivery] = await eventually(async () => {
        const list = (await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`)).body.data;
        return list[0]?.attempts.length >= 1 ? list : undefined;
      }, 30_000, 'the first attempt recorded');
      expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'localhost resolves to a non-public address' });
      expect(await receiver.received(path)).toEqual([]);
      // The API layer refuses the same URL for a new endpoint or a change.
      const created = await call('POST', '/v1/webhooks', { url: `http://localhost:${port}${path}`, events: ['customer.created'] });
      expect(created.body.error).toMatchObject({ code: 'url_not_public', param: 'url' });
      const changed = await call('PATCH', `/v1/webhooks/${endpoint.id}`, { url: `http://localhost:${port}/hooks/other` });
      expect(changed.body.error).toMatchObject({ code: 'url_not_public', param: 'url' });
    } finally {
      await mesh.apps['webhook-dispatch'].kill('SIGTERM');
      await mesh.apps['webhook-dispatch'].restart({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    }
  }, 90_000);
});
