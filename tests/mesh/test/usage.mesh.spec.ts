import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Usage metering as an integrator meets it: a plan with a metered component, a subscription,
 * records through `/v1/usage` (usage-metering knows the subscription from its events, through
 * Kafka), replays, refusals, batches, totals, and the 80 %/100 % alerts delivered as signed
 * `usage.threshold_reached` webhooks to a real receiver — also under 50 concurrent senders.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
let planId: string;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Usage'));
  call = api(mesh, keys.test);
  const plan = await call('POST', '/v1/plans', { name: 'Metered', pricing_model: 'flat_rate', amount_monthly: 1000 });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
  for (const metric_name of ['api_calls', 'storage_gb']) {
    expect((await call('POST', `/v1/plans/${planId}/price-components`, { type: 'metered', name: metric_name, metric_name, unit_amount: 2, included_quantity: 100 })).status).toBe(201);
  }
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

/** A new subscription, once usage-metering has learned of it from its event. */
async function newSubscription(key = keys.test): Promise<string> {
  const client = api(mesh, key);
  const customer = await client('POST', '/v1/customers', { name: 'Metered Ltd', email: 'metered@example.com' });
  const subscription = await client('POST', '/v1/subscriptions', { customer: customer.body.id, plan: planId, billing_interval: 'monthly' });
  expect(subscription.status).toBe(201);
  const id = subscription.body.id as string;
  await eventually(async () => (await client('GET', `/v1/usage/summary?subscription=${id}`)).status === 200 || undefined, 30_000, 'usage-metering to learn of the subscription');
  return id;
}

const recordsStored = async () => Number((await queryDatabase<{ n: string }>(mesh.databaseUrls['usage-metering'], 'SELECT count(*) AS n FROM usage_records'))[0].n);

describe('/v1/usage', () => {
  it('records usage once per idempotency_key, answers a replay with the original and another body with 409, and totals the period', async () => {
    const subscription = await newSubscription();
    const body = { subscription, metric_name: 'api_calls', quantity: 40, idempotency_key: 'req-1' };
    const first = await call('POST', '/v1/usage', body);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ object: 'usage_record', livemode: false, subscription, metric_name: 'api_calls', quantity: 40, idempotency_key: 'req-1' });
    expect(first.body.id).toMatch(/^ur_/);

    const replay = await call('POST', '/v1/usage', body);
    expect(replay).toMatchObject({ status: 201, body: first.body });
    const conflict = await call('POST', '/v1/usage', { ...body, quantity: 41 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'idempotency_key_reused', param: 'idempotency_key', type: 'idempotency_error' });

    const summary = await call('GET', `/v1/usage/summary?subscription=${subscription}`);
    expect(summary.body).toMatchObject({ object: 'usage_summary', subscription, metrics: [{ metric_name: 'api_calls', total: 40, limit: null, limit_source: 'none', included_quantity: 100 }, { metric_name: 'storage_gb', total: 0 }] });
    const listed = await call('GET', `/v1/usage?subscription=${subscription}&metric_name=api_calls&period_start=${first.body.period.start}`);
    expect(listed.body).toMatchObject({ object: 'list', url: '/v1/usage', total: 1, data: [first.body] });
  });

  it('refuses unknown, other-app and paused subscriptions and unmetered metrics with documented codes', async () => {
    const subscription = await newSubscription();
    const record = (fields: object, key = keys.test) => api(mesh, key)('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity: 1, idempotency_key: `k-${Math.random()}`, ...fields });
    expect((await record({ subscription: 'sub_unknown' })).body.error).toMatchObject({ code: 'resource_missing', param: 'subscription' });
    expect((await record({}, keys.live)).status).toBe(400);
    const unmetered = await record({ metric_name: 'seats' });
    expect([unmetered.status, unmetered.body.error.code, unmetered.body.error.param]).toEqual([400, 'metric_not_metered', 'metric_name']);
    expect((await call('POST', `/v1/subscriptions/${subscription}/pause`, {})).status).toBe(200);
    const paused = await eventually(async () => {
      const answer = await record({});
      return answer.status === 409 ? answer : undefined;
    }, 30_000, 'the pause to reach usage-metering');
    expect(paused.body.error.code).toBe('subscription_paused');
  });

  it('refuses bad input with 400 in the error shape and stores nothing', async () => {
    const subscription = await newSubscription();
    const before = await recordsStored();
    const good = { subscription, metric_name: 'api_calls', quantity: 1, idempotency_key: 'bad-input' };
    const cases: [object, string][] = [
      [{ quantity: -1 }, 'quantity'],
      [{ quantity: 1.5 }, 'quantity'],
      [{ quantity: 1_000_000_001 }, 'quantity'],
      [{ metric_name: '' }, 'metric_name'],
      [{ metric_name: 'm'.repeat(101) }, 'metric_name'],
      [{ idempotency_key: '' }, 'idempotency_key'],
      [{ idempotency_key: 'k'.repeat(256) }, 'idempotency_key'],
      [{ timestamp: 1 }, 'timestamp'],
      [{ timestamp: Math.floor(Date.now() / 1000) + 86_400 }, 'timestamp'],
    ];
    for (const [fields, param] of cases) {
      const answer = await call('POST', '/v1/usage', { ...good, ...fields });
      expect([fields, answer.status, answer.body.error.param]).toEqual([fields, 400, param]);
      expect(answer.body.error.request_id).toMatch(/^req_/);
    }
    const oversized = Array.from({ length: 1001 }, (_, index) => ({ ...good, idempotency_key: `o-${index}` }));
    const batch = await call('POST', '/v1/usage/batch', { records: oversized });
    expect([batch.status, batch.body.error.param]).toEqual([400, 'records']);
    for (const records of [[[good]], [good, [good]], [[]]]) {
      const nested = await call('POST', '/v1/usage/batch', { records });
      expect([nested.status, nested.body.error.type, nested.body.error.code, nested.body.error.param]).toEqual([400, 'invalid_request_error', 'parameter_invalid', 'records']);
      expect(nested.body.error.request_id).toMatch(/^req_/);
    }
    expect(await recordsStored()).toBe(before);
  });

  it('takes a batch with one result per record', async () => {
    const subscription = await newSubscription();
    const records = [
      { subscription, metric_name: 'api_calls', quantity: 5, idempotency_key: 'b-1' },
      { subscription, metric_name: 'storage_gb', quantity: 2, idempotency_key: 'b-2' },
      { subscription, metric_name: 'api_calls', quantity: 5, idempotency_key: 'b-1' },
      { subscription, metric_name: 'seats', quantity: 1, idempotency_key: 'b-3' },
    ];
    const answer = await call('POST', '/v1/usage/batch', { records });
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((result: any) => [result.status, result.record?.idempotency_key ?? null, result.error?.code ?? null])).toEqual([
      ['created', 'b-1', null], ['created', 'b-2', null], ['replayed', 'b-1', null], ['refused', null, 'metric_not_metered'],
    ]);
    const again = await call('POST', '/v1/usage/batch', { records: records.slice(0, 2) });
    expect(again.body.data.map((result: any) => result.status)).toEqual(['replayed', 'replayed']);
  });
});

describe('usage alerts', () => {
  it('79 %, 81 % then 100 % of the limit: exactly two alerts and two signed usage.threshold_reached webhooks; 50 concurrent senders alike', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/usage`, events: ['usage.threshold_reached'] });
    expect(endpoint.status).toBe(201);

    const subscription = await newSubscription();
    const limit = await call('POST', '/v1/usage/limits', { subscription, metric_name: 'api_calls', limit: 100 });
    expect(limit.body).toMatchObject({ object: 'usage_limit', subscription, metric_name: 'api_calls', limit: 100 });
    for (const [quantity, key] of [[79, 'a'], [2, 'b'], [19, 'c'], [30, 'd']] as const) {
      expect((await call('POST', '/v1/usage', { subscription, metric_name: 'api_calls', quantity, idempotency_key: key })).status).toBe(201);
    }

    // 50 concurrent senders on another subscription: 3 units each, 150 in all.
    const crowded = await newSubscription();
    await call('POST', '/v1/usage/limits', { subscription: crowded, metric_name: 'api_calls', limit: 100 });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => call('POST', '/v1/usage', { subscription: crowded, metric_name: 'api_calls', quantity: 3, idempotency_key: `sender-${index}` })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(201));

    const alerts = await call('GET', `/v1/usage/alerts?subscription=${subscription}`);
    expect(alerts.body.data.map((alert: any) => [alert.threshold, alert.usage, alert.limit])).toEqual([[100, 100, 100], [80, 81, 100]]);
    expect((await call('GET', `/v1/usage/alerts?subscription=${crowded}`)).body.data.map((alert: any) => alert.threshold).sort()).toEqual([100, 80]);
    expect((await call('GET', '/v1/usage/alerts?limit=100')).body.total).toBe(4);

    const deliveries = await eventually(async () => {
      const received = await receiver.received('/hooks/usage');
      return received.length >= 4 ? received : undefined;
    }, 60_000, 'four usage.threshold_reached deliveries');
    const events = deliveries.map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as any);
    expect(events.map((event) => [event.type, event.data.object.subscription, event.data.object.threshold]).sort()).toEqual(
      [['usage.threshold_reached', subscription, 80], ['usage.threshold_reached', subscription, 100], ['usage.threshold_reached', crowded, 80], ['usage.threshold_reached', crowded, 100]].sort(),
    );
    const first = events.find((event) => event.data.object.subscription === subscription && event.data.object.threshold === 80);
    expect(first.data.object).toMatchObject({ object: 'usage_alert', metric_name: 'api_calls', usage: 81, limit: 100, period: alerts.body.data[1].period });
    // Nothing more arrives: each threshold is delivered once.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await receiver.received('/hooks/usage')).toHaveLength(4);
  });
});
