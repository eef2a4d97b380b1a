import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queryDatabase } from '@recur/testing';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Concurrent `POST /v1/usage` calls travel to usage-metering as shared `RecordUsageBatch` calls
 * (the gateway's UsageRecordCoalescer), yet each caller gets exactly the answer `RecordUsage`
 * would give it alone: its own record, the original on a replay (also of a concurrent twin),
 * its own 409 or 400 — and a neighbour's bad record fails no one else.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;
let planId: string;

beforeAll(async () => {
  mesh = await startMesh();
  ({ keys } = await mesh.createAccount('Coalesced usage'));
  call = api(mesh, keys.test);
  const plan = await call('POST', '/v1/plans', { name: 'Metered', pricing_model: 'flat_rate', amount_monthly: 1000 });
  planId = plan.body.id;
  expect((await call('POST', `/v1/plans/${planId}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 0 })).status).toBe(201);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

async function newSubscription(): Promise<string> {
  const customer = await call('POST', '/v1/customers', { name: 'Metered Ltd', email: 'metered@example.com' });
  const subscription = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan: planId, billing_interval: 'monthly' });
  expect(subscription.status).toBe(201);
  const id = subscription.body.id as string;
  await eventually(async () => (await call('GET', `/v1/usage/summary?subscription=${id}`)).status === 200 || undefined, 30_000, 'usage-metering to learn of the subscription');
  return id;
}

type Span = { name: string; service: string; kind: number };
const serverSpans = (method: string): number =>
  readdirSync(mesh.traceDir)
    .flatMap((file) => readFileSync(join(mesh.traceDir, file), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as Span))
    .filter((span) => span.service === 'usage-metering' && span.kind === 1 && span.name === `grpc.recur.usage_metering.v1.UsageMeteringService/${method}`).length;

describe('concurrent single records', () => {
  it('each caller gets its own answer, replays and twins the original, a clash 409, bad neighbours their own 400 — sent as shared batches', async () => {
    const subscription = await newSubscription();
    const batchesBefore = serverSpans('RecordUsageBatch');
    const singlesBefore = serverSpans('RecordUsage');
    const good = Array.from({ length: 30 }, (_, index) => ({ subscription, metric_name: 'api_calls', quantity: index + 1, idempotency_key: `good-${index}` }));
    const twin = { subscription, metric_name: 'api_calls', quantity: 7, idempotency_key: 'twin' };
    const clash = [{ ...twin, idempotency_key: 'clash', quantity: 1 }, { ...twin, idempotency_key: 'clash', quantity: 2 }];
    const unmetered = { subscription, metric_name: 'seats', quantity: 1, idempotency_key: 'unmetered' };
    const unknown = { subscription: 'sub_unknown', metric_name: 'api_calls', quantity: 1, idempotency_key: 'unknown' };
    const bodies = [...good, twin, twin, twin, ...clash, unmetered, unknown];
    const answers = await Promise.all(bodies.map((body) => call('POST', '/v1/usage', body)));

    good.forEach((body, index) => {
      expect([answers[index].status, answers[index].body]).toEqual([201, expect.objectContaining({ object: 'usage_record', subscription, metric_name: 'api_calls', quantity: body.quantity, idempotency_key: body.idempotency_key })]);
    });
    const twins = answers.slice(30, 33);
    expect(twins.map((answer) => answer.status)).toEqual([201, 201, 201]);
    expect(new Set(twins.map((answer) => answer.body.id)).size).toBe(1);
    expect(twins[0].body).toMatchObject({ quantity: 7, idempotency_key: 'twin' });
    const clashes = answers.slice(33, 35);
    expect(clashes.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const clashStored = clashes.find((answer) => answer.status === 201)!.body;
    expect(clashes.find((answer) => answer.status === 409)!.body.error).toMatchObject({ code: 'idempotency_key_reused', param: 'idempotency_key', type: 'idempotency_error' });
    expect([answers[35].status, answers[35].body.error.code, answers[35].body.error.param]).toEqual([400, 'metric_not_metered', 'metric_name']);
    expect([answers[36].status, answers[36].body.error.code, answers[36].body.error.param]).toEqual([400, 'resource_missing', 'subscription']);

    // Counted once each: 1 + … + 30, the twin once, the clash's winner once.
    const summary = await call('GET', `/v1/usage/summary?subscription=${subscription}`);
    expect(summary.body.metrics[0].total).toBe((30 * 31) / 2 + 7 + clashStored.quantity);
    const rows = await queryDatabase<{ n: string }>(mesh.databaseUrls['usage-metering'], 'SELECT count(*) AS n FROM usage_records WHERE subscription_id = $1', [subscription]);
    expect(Number(rows[0].n)).toBe(32);

    // They travelled as shared batches: no RecordUsage call, fewer batches than callers.
    const batches = await eventually(async () => {
      const sent = serverSpans('RecordUsageBatch') - batchesBefore;
      return sent > 0 ? sent : undefined;
    }, 10_000, 'the batches to be traced');
    expect(serverSpans('RecordUsage') - singlesBefore).toBe(0);
    expect(batches).toBeLessThan(bodies.length);
  });

  it('a record the service finds malformed though the door let it through fails only its own caller, with its own param', async () => {
    const subscription = await newSubscription();
    // Past the door (ids up to 100 characters), malformed to the service (64): its batch is refused whole, then resent one by one.
    const overlong = { subscription: `sub_${'x'.repeat(76)}`, metric_name: 'api_calls', quantity: 1, idempotency_key: 'overlong' };
    const good = Array.from({ length: 8 }, (_, index) => ({ subscription, metric_name: 'api_calls', quantity: 1, idempotency_key: `n-${index}` }));
    const [refused, ...stored] = await Promise.all([overlong, ...good].map((body) => call('POST', '/v1/usage', body)));
    expect([refused.status, refused.body.error.code, refused.body.error.param]).toEqual([400, 'parameter_invalid', 'subscription']);
    expect(stored.map((answer) => [answer.status, answer.body.idempotency_key])).toEqual(good.map((body) => [201, body.idempotency_key]));
    expect((await call('GET', `/v1/usage/summary?subscription=${subscription}`)).body.metrics[0].total).toBe(8);
  });

  it('a replay after the fact answers the original record, and another body 409, as RecordUsage does', async () => {
    const subscription = await newSubscription();
    const body = { subscription, metric_name: 'api_calls', quantity: 3, idempotency_key: 'later' };
    const first = await call('POST', '/v1/usage', body);
    expect(first.status).toBe(201);
    const [replay, clash] = await Promise.all([call('POST', '/v1/usage', body), call('POST', '/v1/usage', { ...body, quantity: 4 })]);
    expect([replay.status, replay.body]).toEqual([201, first.body]);
    expect([clash.status, clash.body.error.code]).toEqual([409, 'idempotency_key_reused']);
  });
});

describe('batches', () => {
  it('one key twice in a batch: stored once, the same body replayed, another body refused alone; a refused record fails no other', async () => {
    const subscription = await newSubscription();
    const records = [
      { subscription, metric_name: 'api_calls', quantity: 5, idempotency_key: 'b-1' },
      { subscription, metric_name: 'api_calls', quantity: 6, idempotency_key: 'b-1' },
      { subscription, metric_name: 'api_calls', quantity: 5, idempotency_key: 'b-1' },
      { subscription: 'sub_unknown', metric_name: 'api_calls', quantity: 1, idempotency_key: 'b-2' },
      { subscription, metric_name: 'api_calls', quantity: 2, idempotency_key: 'b-3' },
    ];
    const answer = await call('POST', '/v1/usage/batch', { records });
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((result: any) => [result.status, result.record?.quantity ?? null, result.error?.code ?? null, result.error?.param ?? null])).toEqual([
      ['created', 5, null, null],
      ['refused', null, 'idempotency_key_reused', 'records[1].idempotency_key'],
      ['replayed', 5, null, null],
      ['refused', null, 'resource_missing', 'records[3].subscription'],
      ['created', 2, null, null],
    ]);
    expect(answer.body.data[2].record.id).toBe(answer.body.data[0].record.id);
    expect((await call('GET', `/v1/usage/summary?subscription=${subscription}`)).body.metrics[0].total).toBe(7);
  });
});
