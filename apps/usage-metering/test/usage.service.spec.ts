import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { DescMessage, JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import { subscriptionEventsV1, usageMeteringV1 } from '@recur/contracts';
import { type BusMessage, decodeInternalEvent, decodePublicEvent, encodeEvent, internalEventsTopic, KafkaEventBus, newInternalEvent } from '@recur/messaging';
import { eventually, grpcFailure, queryDatabase, type ServiceUnderTest, startServiceUnderTest, testKafkaBrokers } from '@recur/testing';
import { USAGE_BATCH_MAX, USAGE_GRACE_SECONDS } from '@recur/vocabulary';

/**
 * usage-metering as its own process on a real PostgreSQL database, reading the subscription
 * service's events from a real Kafka broker (published here as the subscription service's
 * relay publishes them), exercised through gRPC only.
 */
jest.setTimeout(60_000);

const namespace = `usage-${randomBytes(4).toString('hex')}`;
let service: ServiceUnderTest<typeof usageMeteringV1.UsageMeteringService>;
let bus: KafkaEventBus;

beforeAll(async () => {
  const brokers = await testKafkaBrokers();
  service = await startServiceUnderTest('usage-metering', usageMeteringV1.UsageMeteringService, { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: namespace });
  bus = new KafkaEventBus({ brokers: brokers.split(','), clientId: 'usage-test' });
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await service?.stop();
}, 60_000);

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
type Tenant = ReturnType<typeof newTenant>;
const DAY = 86_400;
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface SubscriptionShape {
  id: string;
  status: string;
  periodStart: number;
  periodEnd: number;
  metrics: string[];
  updated: number;
  /** The plan's limit on every metered component (usage_limit), if any. */
  usageLimit?: number;
}

let updates = 0;
/** Publishes a subscription event as the subscription service's relay would, and waits until the view holds it. */
async function publishSubscription(tenant: Tenant, schema: DescMessage, shape: SubscriptionShape): Promise<void> {
  const subscription = {
    id: shape.id, livemode: tenant.livemode, customerId: 'cus_test', planId: 'plan_test', status: shape.status, billingInterval: 'monthly', quantity: 1,
    price: {
      planName: 'Metered', pricingModel: 'flat_rate', amountMonthly: { amountMinor: 0n, currency: 'usd' }, packageSize: 1,
      components: [
        ...shape.metrics.map((metric, index) => ({
          id: `pc_${index}`, type: 'metered', name: metric, metricName: metric, unitAmount: 5n, includedQuantity: 10n,
          ...(shape.usageLimit === undefined ? {} : { usageLimit: BigInt(shape.usageLimit) }),
        })),
        { id: 'pc_fixed', type: 'fixed', name: 'Support', unitAmount: 1000n },
      ],
    },
    currentPeriodStart: BigInt(shape.periodStart), currentPeriodEnd: BigInt(shape.periodEnd), periodsBilled: 1, created: BigInt(shape.periodStart), updated: BigInt(shape.updated),
  };
  const event = newInternalEvent(tenant, shape.id, schema, { subscription } as MessageInitShape<typeof subscriptionEventsV1.SubscriptionCreatedSchema>, new Date());
  const message: BusMessage = { topic: internalEventsTopic('subscription', { KAFKA_TOPIC_PREFIX: namespace }), key: shape.id, value: JSON.stringify(encodeEvent(event)), headers: { 'event-id': event.id, 'event-type': event.type } };
  await bus.publish([message]);
  await eventually(async () => (await inbox(event.id)) > 0 || undefined, 30_000, `event ${event.type} consumed`);
}
const inbox = async (eventId: string) => (await queryDatabase(service.databaseUrl, 'SELECT 1 FROM inbox_events WHERE event_id = $1', [eventId])).length;

/** An active subscription in a period that began a day ago and ends in 29 days. */
async function newSubscription(tenant: Tenant, metrics = ['api_calls', 'storage_gb']): Promise<SubscriptionShape> {
  const shape = { id: `sub_${randomBytes(8).toString('hex')}`, status: 'active', periodStart: nowSeconds() - DAY, periodEnd: nowSeconds() + 29 * DAY, metrics, updated: nowSeconds() - DAY + ++updates };
  await publishSubscription(tenant, subscriptionEventsV1.SubscriptionCreatedSchema, shape);
  return shape;
}

const record = (tenant: Tenant, subscriptionId: string, fields: Partial<usageMeteringV1.UsageRecordInput> = {}) =>
  service.client.recordUsage({ tenant, record: { subscriptionId, metricName: 'api_calls', quantity: 1n, idempotencyKey: `key_${randomBytes(6).toString('hex')}`, ...fields } });
const summary = async (tenant: Tenant, subscriptionId: string, periodStart?: number) =>
  (await service.client.getUsageSummary({ tenant, subscriptionId, ...(periodStart === undefined ? {} : { periodStart: BigInt(periodStart) }) }));
const totalOf = async (tenant: Tenant, subscriptionId: string, metric = 'api_calls', periodStart?: number) =>
  (await summary(tenant, subscriptionId, periodStart)).metrics.find((entry) => entry.metricName === metric)?.total;
const countRows = async (table: string, accountId: string) =>
  Number((await queryDatabase<{ n: string }>(service.databaseUrl, `SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [accountId]))[0].n);
interface OutboxRow extends Record<string, unknown> {
  topic: string;
  type: string;
  payload: JsonObject;
}
const alertEvents = (subscriptionId: string) =>
  queryDatabase<OutboxRow>(service.databaseUrl, `SELECT topic, type, payload FROM outbox_events WHERE key = $1 ORDER BY seq`, [subscriptionId]);

describe('recording usage', () => {
  it('stores a record in the current period, answers the same key and body with the original, counted once, and another body with 409', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    const first = await record(tenant, subscription.id, { quantity: 7n, idempotencyKey: 'call-1' });
    expect(first.replayed).toBe(false);
    expect(first.record).toMatchObject({ subscriptionId: subscription.id, metricName: 'api_calls', quantity: 7n, idempotencyKey: 'call-1', periodStart: BigInt(subscription.periodStart), periodEnd: BigInt(subscription.periodEnd) });
    expect(first.record!.id).toMatch(/^ur_/);
    expect(Math.abs(Number(first.record!.timestamp) - nowSeconds())).toBeLessThan(60);

    const again = await record(tenant, subscription.id, { quantity: 7n, idempotencyKey: 'call-1' });
    expect(again).toMatchObject({ replayed: true, record: first.record });
    expect(await totalOf(tenant, subscription.id)).toBe(7n);

    const conflict = await grpcFailure(record(tenant, subscription.id, { quantity: 8n, idempotencyKey: 'call-1' }));
    expect(conflict).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'idempotency_key_reused', param: 'idempotency_key' });
    const dated = await grpcFailure(record(tenant, subscription.id, { quantity: 7n, idempotencyKey: 'call-1', timestamp: BigInt(nowSeconds()) }));
    expect(dated.errorCode).toBe('idempotency_key_reused');
    expect(await totalOf(tenant, subscription.id)).toBe(7n);
    expect(await countRows('usage_records', tenant.accountId)).toBe(1);

    // The key is per subscription: another subscription may use the same one.
    const other = await newSubscription(tenant);
    expect((await record(tenant, other.id, { quantity: 3n, idempotencyKey: 'call-1' })).replayed).toBe(false);
  });

  it('refuses unknown and other-app subscriptions, unmetered metrics, paused, cancelled and completed subscriptions', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    expect(await grpcFailure(record(tenant, 'sub_unknown'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'subscription' });
    expect(await grpcFailure(record({ ...tenant, livemode: true }, subscription.id))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing' });
    expect(await grpcFailure(record(newTenant(), subscription.id))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing' });
    expect(await grpcFailure(record(tenant, subscription.id, { metricName: 'seats' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'metric_not_metered', param: 'metric_name' });

    for (const [status, schema, code] of [
      ['paused', subscriptionEventsV1.SubscriptionPausedSchema, 'subscription_paused'],
      ['cancelled', subscriptionEventsV1.SubscriptionCancelledSchema, 'subscription_cancelled'],
      ['completed', subscriptionEventsV1.SubscriptionCompletedSchema, 'subscription_completed'],
    ] as const) {
      const moved = await newSubscription(tenant);
      await publishSubscription(tenant, schema, { ...moved, status, updated: moved.updated + 1 });
      expect(await grpcFailure(record(tenant, moved.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: code });
    }
    expect(await countRows('usage_records', tenant.accountId)).toBe(0);
  });

  it('refuses malformed records with the offending param and stores nothing', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    const cases: [Partial<usageMeteringV1.UsageRecordInput>, string][] = [
      [{ quantity: -1n }, 'quantity'],
      [{ quantity: 1_000_000_001n }, 'quantity'],
      [{ metricName: '' }, 'metric_name'],
      [{ metricName: 'a'.repeat(101) }, 'metric_name'],
      [{ metricName: 'API_CALLS' }, 'metric_name'],
      [{ idempotencyKey: '' }, 'idempotency_key'],
      [{ idempotencyKey: 'k'.repeat(256) }, 'idempotency_key'],
      [{ idempotencyKey: 'has space' }, 'idempotency_key'],
      [{ timestamp: 0n }, 'timestamp'],
      [{ subscriptionId: '' }, 'subscription'],
    ];
    for (const [fields, param] of cases) {
      expect([fields, await grpcFailure(record(tenant, subscription.id, fields))]).toEqual([fields, expect.objectContaining({ code: grpc.status.INVALID_ARGUMENT, param })]);
    }
    expect(await countRows('usage_records', tenant.accountId)).toBe(0);
    expect(await countRows('usage_totals', tenant.accountId)).toBe(0);
  });

  it('takes timestamps in the current period and, within the grace window, the previous one; refuses others', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    const inPeriod = await record(tenant, subscription.id, { timestamp: BigInt(subscription.periodStart + 60) });
    expect(inPeriod.record!.timestamp).toBe(BigInt(subscription.periodStart + 60));
    expect(await grpcFailure(record(tenant, subscription.id, { timestamp: BigInt(subscription.periodStart - 1) }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'timestamp_outside_period', param: 'timestamp' });
    expect(await grpcFailure(record(tenant, subscription.id, { timestamp: BigInt(nowSeconds() + 3600) }))).toMatchObject({ errorCode: 'timestamp_outside_period' });

    // The renewal: the period that ended becomes the previous one, open for late records for a while.
    const renewed = { ...subscription, periodStart: subscription.periodEnd, periodEnd: subscription.periodEnd + 30 * DAY, updated: subscription.updated + 1 };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionActivatedSchema, renewed);
    const late = await record(tenant, subscription.id, { timestamp: BigInt(subscription.periodStart + 120), quantity: 5n });
    expect(late.record).toMatchObject({ periodStart: BigInt(subscription.periodStart), periodEnd: BigInt(subscription.periodEnd) });
    expect(await totalOf(tenant, subscription.id, 'api_calls', subscription.periodStart)).toBe(6n);
    expect(await totalOf(tenant, subscription.id)).toBe(0n);
    expect(await grpcFailure(record(tenant, subscription.id, { timestamp: BigInt(subscription.periodStart - 1) }))).toMatchObject({ errorCode: 'timestamp_outside_period' });

    // After the grace window the previous period is closed: the view learned of the new period long ago.
    await queryDatabase(service.databaseUrl, `UPDATE subscription_views SET period_learned_at = now() - make_interval(secs => $2) WHERE id = $1`, [subscription.id, USAGE_GRACE_SECONDS + 1]);
    // Written behind the service's back, so its cached view lives on until USAGE_CACHE_MS (1 s) passes.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await grpcFailure(record(tenant, subscription.id, { timestamp: BigInt(subscription.periodStart + 120) }))).toMatchObject({ errorCode: 'timestamp_outside_period' });
  });

  it('keeps the newest facts of a subscription: an older event changes nothing', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionCancelledSchema, { ...subscription, status: 'cancelled', updated: subscription.updated + 10 });
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionUpdatedSchema, { ...subscription, status: 'active', updated: subscription.updated + 5 });
    expect((await grpcFailure(record(tenant, subscription.id))).errorCode).toBe('subscription_cancelled');
  });
});

describe('batches', () => {
  it('answers one result per record in order, under one idempotency rule, and refuses a malformed or oversized batch whole', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    await record(tenant, subscription.id, { idempotencyKey: 'earlier', quantity: 4n });
    const records = [
      { subscriptionId: subscription.id, metricName: 'api_calls', quantity: 10n, idempotencyKey: 'b-1' },
      { subscriptionId: subscription.id, metricName: 'storage_gb', quantity: 3n, idempotencyKey: 'b-2' },
      { subscriptionId: subscription.id, metricName: 'api_calls', quantity: 4n, idempotencyKey: 'earlier' },
      { subscriptionId: subscription.id, metricName: 'api_calls', quantity: 99n, idempotencyKey: 'b-1' },
      { subscriptionId: subscription.id, metricName: 'api_calls', quantity: 10n, idempotencyKey: 'b-1' },
      { subscriptionId: 'sub_unknown', metricName: 'api_calls', quantity: 1n, idempotencyKey: 'b-3' },
      { subscriptionId: subscription.id, metricName: 'seats', quantity: 1n, idempotencyKey: 'b-4' },
    ];
    const { results } = await service.client.recordUsageBatch({ tenant, records });
    expect(results.map((result) => [result.record?.idempotencyKey ?? null, result.replayed, result.error?.code ?? null, result.error?.param ?? null])).toEqual([
      ['b-1', false, null, null],
      ['b-2', false, null, null],
      ['earlier', true, null, null],
      [null, false, 'idempotency_key_reused', 'records[3].idempotency_key'],
      ['b-1', true, null, null],
      [null, false, 'resource_missing', 'records[5].subscription'],
      [null, false, 'metric_not_metered', 'records[6].metric_name'],
    ]);
    expect(results[4].record!.id).toBe(results[0].record!.id);
    expect(await totalOf(tenant, subscription.id)).toBe(14n);
    expect(await totalOf(tenant, subscription.id, 'storage_gb')).toBe(3n);

    const before = await countRows('usage_records', tenant.accountId);
    const malformed = [{ subscriptionId: subscription.id, metricName: 'api_calls', quantity: 1n, idempotencyKey: 'fine' }, { subscriptionId: subscription.id, metricName: 'api_calls', quantity: -1n, idempotencyKey: 'bad' }];
    expect(await grpcFailure(service.client.recordUsageBatch({ tenant, records: malformed }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'records[1].quantity' });
    const oversized = Array.from({ length: USAGE_BATCH_MAX + 1 }, (_, index) => ({ subscriptionId: subscription.id, metricName: 'api_calls', quantity: 1n, idempotencyKey: `o-${index}` }));
    expect(await grpcFailure(service.client.recordUsageBatch({ tenant, records: oversized }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'records' });
    expect(await grpcFailure(service.client.recordUsageBatch({ tenant, records: [] }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'records' });
    expect(await countRows('usage_records', tenant.accountId)).toBe(before);
  });

  it('takes a batch as parallel lists, answers it briefly with a receipt of the same outcomes, and stores keys with quotes, backslashes, commas and NULL as sent', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    const timestamp = BigInt(nowSeconds() - 60);
    const keys = ['say"hi"', 'back\\slash', 'NULL', '{a,b}', 'plain'];
    const records = [
      ...keys.map((idempotencyKey, index) => ({ subscriptionId: subscription.id, metricName: 'api_calls', quantity: BigInt(index + 1), idempotencyKey })),
      { subscriptionId: subscription.id, metricName: 'storage_gb', quantity: 7n, idempotencyKey: 'dated', timestamp },
      { subscriptionId: subscription.id, metricName: 'seats', quantity: 1n, idempotencyKey: 'unmetered' },
      { subscriptionId: subscription.id, metricName: 'api_calls', quantity: 1n, idempotencyKey: 'say"hi"' },
    ];
    // As the gateway sends a batch: parallel lists (a timestamp of 0: none), a brief answer.
    const columns = {
      subscriptionIds: records.map((record) => record.subscriptionId), metricNames: records.map((record) => record.metricName), quantities: records.map((record) => record.quantity),
      idempotencyKeys: records.map((record) => record.idempotencyKey), timestamps: records.map((record) => ('timestamp' in record ? record.timestamp! : 0n)),
    };
    const before = await countRows('usage_records', tenant.accountId);
    for (const [malformed, param] of [
      [{ columns: { ...columns, quantities: columns.quantities.slice(1) } }, 'records'],
      [{ columns, records: records.slice(0, 1) }, 'records'],
      [{ columns: { ...columns, quantities: columns.quantities.map((quantity, index) => (index === 2 ? -1n : quantity)) } }, 'records[2].quantity'],
      [{ columns: { ...columns, timestamps: columns.timestamps.map((timestamp, index) => (index === 3 ? -5n : timestamp)) } }, 'records[3].timestamp'],
    ] as const) {
      expect(await grpcFailure(service.client.recordUsageBatch({ tenant, ...malformed, brief: true }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param });
    }
    expect(await countRows('usage_records', tenant.accountId)).toBe(before);
    const brief = await service.client.recordUsageBatch({ tenant, columns, brief: true });
    expect(brief.results).toEqual([]);
    const receipt = brief.receipt!;
    expect(receipt.refusals.map((refusal) => [refusal.index, refusal.error!.code, refusal.error!.param])).toEqual([[6, 'metric_not_metered', 'records[6].metric_name']]);
    expect(receipt.ids[6]).toBe('');
    // The same records again, answered in full: every one replayed, as the receipt said it was stored.
    const { results } = await service.client.recordUsageBatch({ tenant, records: records.filter((_, index) => index !== 6) });
    const asReceipt = (index: number) => [receipt.ids[index], receipt.timestamps[index], receipt.periodStarts[index], receipt.periodEnds[index], receipt.created[index]];
    expect(results.map((result) => [result.record!.id, result.record!.timestamp, result.record!.periodStart, result.record!.periodEnd, result.record!.created])).toEqual([0, 1, 2, 3, 4, 5, 7].map(asReceipt));
    expect(results.every((result) => result.replayed)).toBe(true);
    expect(receipt.replayed).toEqual([false, false, false, false, false, false, false, true]);
    expect(receipt.ids[7]).toBe(receipt.ids[0]);
    expect(receipt.timestamps[5]).toBe(timestamp);
    expect([receipt.periodStarts[0], receipt.periodEnds[0]]).toEqual([BigInt(subscription.periodStart), BigInt(subscription.periodEnd)]);
    const stored = await service.client.listUsageRecords({ tenant, subscriptionId: subscription.id, page: { limit: 10 } });
    expect(stored.records.map((record) => record.idempotencyKey).sort()).toEqual([...keys, 'dated'].sort());
    expect(await totalOf(tenant, subscription.id)).toBe(15n);
  });
});

describe('reading usage', () => {
  it('lists a subscription records newest first, by metric and period, and sums the current period per metric', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    for (const [metricName, quantity] of [['api_calls', 1n], ['storage_gb', 2n], ['api_calls', 3n]] as const) await record(tenant, subscription.id, { metricName, quantity });
    const all = await service.client.listUsageRecords({ tenant, subscriptionId: subscription.id, page: { limit: 2 } });
    expect(all.records.map((entry) => entry.quantity)).toEqual([3n, 2n]);
    expect(all.page).toMatchObject({ total: 3, hasMore: true });
    const calls = await service.client.listUsageRecords({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', periodStart: BigInt(subscription.periodStart), page: { limit: 10 } });
    expect(calls.records.map((entry) => entry.quantity)).toEqual([3n, 1n]);
    expect((await service.client.listUsageRecords({ tenant, subscriptionId: subscription.id, periodStart: 1n, page: { limit: 10 } })).records).toEqual([]);
    expect((await service.client.listUsageRecords({ tenant: { ...tenant, livemode: true }, subscriptionId: subscription.id, page: { limit: 10 } })).records).toEqual([]);

    const current = await summary(tenant, subscription.id);
    expect(current).toMatchObject({ subscriptionId: subscription.id, periodStart: BigInt(subscription.periodStart), periodEnd: BigInt(subscription.periodEnd) });
    expect(current.metrics.map((metric) => [metric.metricName, metric.total, metric.limit ?? null, metric.limitSource, metric.includedQuantity])).toEqual([
      ['api_calls', 4n, null, 'none', 10n],
      ['storage_gb', 2n, null, 'none', 10n],
    ]);
    expect(await grpcFailure(summary(tenant, 'sub_unknown'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'subscription' });
  });
});

describe('limits and alerts', () => {
  it('79 %, 81 % then 100 % of a subscription limit records exactly two alerts and two usage.threshold_reached events; a new period re-arms them', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    expect(await grpcFailure(service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'seats', limit: 10n }))).toMatchObject({ errorCode: 'metric_not_metered' });
    const { limit } = await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', limit: 100n });
    expect(limit).toMatchObject({ subscriptionId: subscription.id, metricName: 'api_calls', limit: 100n });

    await record(tenant, subscription.id, { quantity: 79n });
    expect((await service.client.listUsageAlerts({ tenant, page: { limit: 10 } })).alerts).toEqual([]);
    await record(tenant, subscription.id, { quantity: 2n });
    await record(tenant, subscription.id, { quantity: 19n });
    await record(tenant, subscription.id, { quantity: 50n });
    await record(tenant, subscription.id, { metricName: 'storage_gb', quantity: 1000n });

    const { alerts } = await service.client.listUsageAlerts({ tenant, subscriptionId: subscription.id, page: { limit: 10 } });
    expect(alerts.map((alert) => [alert.threshold, alert.usage, alert.limit, alert.metricName]).sort()).toEqual([[100, 100n, 100n, 'api_calls'], [80, 81n, 100n, 'api_calls']].sort());
    const internalTopic = `${namespace}.usage-metering.internal`;
    const publicTopic = `${namespace}.usage-metering.public`;
    expect((await alertEvents(subscription.id)).map((row) => [row.topic, row.type])).toEqual([
      [internalTopic, 'recur.usage_metering.v1.UsageThresholdReached'],
      [publicTopic, 'usage.threshold_reached'],
      [internalTopic, 'recur.usage_metering.v1.UsageThresholdReached'],
      [publicTopic, 'usage.threshold_reached'],
    ]);
    const published = (await alertEvents(subscription.id)).filter((row) => row.type === 'usage.threshold_reached').map((row) => decodePublicEvent(JSON.stringify(row.payload)));
    expect(published.map((event) => event.data)).toEqual([
      { object: expect.objectContaining({ object: 'usage_alert', subscription: subscription.id, metric_name: 'api_calls', threshold: 80, usage: 81, limit: 100, period: { start: subscription.periodStart, end: subscription.periodEnd } }) },
      { object: expect.objectContaining({ threshold: 100, usage: 100, limit: 100 }) },
    ]);
    const internal = (await alertEvents(subscription.id)).filter((row) => row.type !== 'usage.threshold_reached').map((row) => decodeInternalEvent(JSON.stringify(row.payload)));
    expect(internal.map((event) => event.aggregateId)).toEqual([subscription.id, subscription.id]);

    const summaryNow = await summary(tenant, subscription.id);
    expect(summaryNow.metrics.find((metric) => metric.metricName === 'api_calls')).toMatchObject({ total: 150n, limit: 100n, limitSource: 'subscription' });

    // The renewal opens a new period with fresh totals: the thresholds are armed again.
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionActivatedSchema, { ...subscription, periodStart: subscription.periodEnd - 30 * DAY + DAY, periodEnd: subscription.periodEnd + DAY, updated: subscription.updated + 1 });
    await record(tenant, subscription.id, { quantity: 85n });
    const after = await service.client.listUsageAlerts({ tenant, subscriptionId: subscription.id, page: { limit: 10 } });
    expect(after.alerts.map((alert) => [alert.threshold, alert.usage])).toEqual([[80, 85n], [100, 100n], [80, 81n]]);
    expect(after.alerts[0].periodStart).toBe(BigInt(subscription.periodEnd - 29 * DAY));

    // Removing the override leaves the plan's limit, and here the plan sets none: no more alerts.
    expect((await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls' })).limit!.limit).toBeUndefined();
    await record(tenant, subscription.id, { quantity: 100n });
    expect((await service.client.listUsageAlerts({ tenant, subscriptionId: subscription.id, page: { limit: 10 } })).page!.total).toBe(3);
  });

  it('crosses each threshold exactly once under 50 concurrent senders', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', limit: 100n });
    // 50 senders × 3 units = 150: every sender races for the same total; 80 and 100 are crossed once each.
    const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => record(tenant, subscription.id, { quantity: 3n, idempotencyKey: `sender-${index}` })));
    expect(answers.every((answer) => !answer.replayed)).toBe(true);
    // The same 50 again (a retry storm) count nothing.
    const replays = await Promise.all(Array.from({ length: 50 }, (_, index) => record(tenant, subscription.id, { quantity: 3n, idempotencyKey: `sender-${index}` })));
    expect(replays.every((answer) => answer.replayed)).toBe(true);
    expect(await totalOf(tenant, subscription.id)).toBe(150n);
    const { alerts } = await service.client.listUsageAlerts({ tenant, subscriptionId: subscription.id, page: { limit: 10 } });
    expect(alerts.map((alert) => alert.threshold).sort()).toEqual([100, 80]);
    for (const alert of alerts) expect(Number(alert.usage)).toBeGreaterThanOrEqual(alert.threshold);
    expect((await alertEvents(subscription.id)).filter((row) => row.type === 'usage.threshold_reached')).toHaveLength(2);
  });
});

describe('the two safeguards of one alert per threshold and period, each alone', () => {
  // Two independent walls keep an alert to one per threshold, metric and period: the crossing
  // rule (only the record that takes the total from below a threshold to it raises the alert,
  // the total's row lock ordering concurrent records) and the unique index on usage_alerts.

  it('the crossing rule alone: 50 concurrent senders propose exactly one alert per threshold (every insert attempt counted, the unique index never consulted)', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', limit: 100n });
    // A BEFORE INSERT trigger sees every alert the service proposes, before ON CONFLICT judges it:
    // the count is what the crossing rule decided, whatever the index would have kept.
    const proposals = `alert_proposals_${randomBytes(4).toString('hex')}`;
    await queryDatabase(service.databaseUrl, `CREATE TABLE ${proposals} (subscription_id text, threshold int)`);
    await queryDatabase(service.databaseUrl, `CREATE FUNCTION ${proposals}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO ${proposals} VALUES (NEW.subscription_id, NEW.threshold); RETURN NEW; END $$`);
    await queryDatabase(service.databaseUrl, `CREATE TRIGGER ${proposals} BEFORE INSERT ON usage_alerts FOR EACH ROW EXECUTE FUNCTION ${proposals}()`);
    try {
      // 50 × 3 units = 150 of a limit of 100, all at once: 80 and 100 are each crossed by one sender.
      await Promise.all(Array.from({ length: 50 }, (_, index) => record(tenant, subscription.id, { quantity: 3n, idempotencyKey: `sender-${index}` })));
      // And records past both thresholds, one after another, cross nothing.
      for (let index = 0; index < 5; index++) await record(tenant, subscription.id, { quantity: 10n });
      expect(await totalOf(tenant, subscription.id)).toBe(200n);
      const proposed = await queryDatabase<{ threshold: number }>(service.databaseUrl, `SELECT threshold FROM ${proposals} WHERE subscription_id = $1 ORDER BY threshold`, [subscription.id]);
      expect(proposed.map((row) => row.threshold)).toEqual([80, 100]);
    } finally {
      await queryDatabase(service.databaseUrl, `DROP TRIGGER ${proposals} ON usage_alerts`);
      await queryDatabase(service.databaseUrl, `DROP FUNCTION ${proposals}()`);
      await queryDatabase(service.databaseUrl, `DROP TABLE ${proposals}`);
    }
  });

  it('the unique index alone: a limit raised after an alert makes the crossing rule propose the same threshold again in the period, and the index keeps one alert and one event', async () => {
    const tenant = newTenant();
    const subscription = await newSubscription(tenant);
    await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', limit: 100n });
    await record(tenant, subscription.id, { quantity: 81n });
    // 81 of 200 is below 80 % again: the next record that passes 160 crosses 80 % by the rule.
    await service.client.setUsageLimit({ tenant, subscriptionId: subscription.id, metricName: 'api_calls', limit: 200n });
    await record(tenant, subscription.id, { quantity: 90n });
    expect(await totalOf(tenant, subscription.id)).toBe(171n);
    const { alerts } = await service.client.listUsageAlerts({ tenant, subscriptionId: subscription.id, page: { limit: 10 } });
    expect(alerts.map((alert) => [alert.threshold, alert.usage, alert.limit])).toEqual([[80, 81n, 100n]]);
    expect((await alertEvents(subscription.id)).filter((row) => row.type === 'usage.threshold_reached')).toHaveLength(1);
  });
});

describe('usage for invoices (GetPeriodUsage)', () => {
  const periodUsage = (tenant: Tenant, subscription: SubscriptionShape, billingKey: string, period = { start: subscription.periodStart, end: subscription.periodEnd }) =>
    service.client.getPeriodUsage({ queries: [{ tenant, subscriptionId: subscription.id, periodStart: BigInt(period.start), periodEnd: BigInt(period.end), metricNames: subscription.metrics, billingKey }] });
  const lines = async (...args: Parameters<typeof periodUsage>) =>
    (await periodUsage(...args)).results[0].lines.map((line) => [line.metricName, Number(line.periodStart), Number(line.quantity), Number(line.billedBefore), line.late]);

  it('alerts at 80 % and 100 % of the plan\'s limit when the subscription sets none; its own limit overrides it', async () => {
    const tenant = newTenant();
    const shape = { id: `sub_${randomBytes(8).toString('hex')}`, status: 'active', periodStart: nowSeconds() - DAY, periodEnd: nowSeconds() + 29 * DAY, metrics: ['api_calls'], updated: nowSeconds(), usageLimit: 50 };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionCreatedSchema, shape);
    expect((await summary(tenant, shape.id)).metrics[0]).toMatchObject({ limit: 50n, limitSource: 'plan' });
    await record(tenant, shape.id, { quantity: 41n });
    await record(tenant, shape.id, { quantity: 9n });
    const { alerts } = await service.client.listUsageAlerts({ tenant, subscriptionId: shape.id, page: { limit: 10 } });
    expect(alerts.map((alert) => [alert.threshold, alert.usage, alert.limit])).toEqual([[100, 50n, 50n], [80, 41n, 50n]]);
    await service.client.setUsageLimit({ tenant, subscriptionId: shape.id, metricName: 'api_calls', limit: 1000n });
    expect((await summary(tenant, shape.id)).metrics[0]).toMatchObject({ limit: 1000n, limitSource: 'subscription' });
  });

  it('bills a period once per key, bills late records of an invoiced period on the next billing, and a preview records nothing', async () => {
    const tenant = newTenant();
    // A period that ends a minute ago (its renewal is about to be billed), then the next one.
    const subscription = { id: `sub_${randomBytes(8).toString('hex')}`, status: 'active', periodStart: nowSeconds() - 10 * DAY, periodEnd: nowSeconds() - 60, metrics: ['api_calls', 'storage_gb'], updated: nowSeconds() - 10 * DAY };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionCreatedSchema, subscription);
    await record(tenant, subscription.id, { quantity: 30n, timestamp: BigInt(subscription.periodStart + DAY) });
    const preview = await lines(tenant, subscription, '');
    expect(preview).toEqual([['api_calls', subscription.periodStart, 30, 0, false], ['storage_gb', subscription.periodStart, 0, 0, false]]);
    expect(await countRows('usage_billings', tenant.accountId)).toBe(0);

    // Five racing billings of one key (replicas, a retried step): one answer, recorded once.
    const billed = await Promise.all(Array.from({ length: 5 }, () => lines(tenant, subscription, 'usage:first')));
    for (const answer of billed) expect(answer).toEqual(preview);
    expect(await countRows('usage_billings', tenant.accountId)).toBe(2);

    // The period renews; a record dated in it arrives in the grace window, after it was billed.
    const next = { ...subscription, periodStart: subscription.periodEnd, periodEnd: subscription.periodEnd + 30 * DAY, updated: subscription.updated + 1 };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionActivatedSchema, next);
    await record(tenant, subscription.id, { quantity: 7n, timestamp: BigInt(subscription.periodEnd - 30) });
    // The key that billed the first period answers what it billed, not the late units.
    expect(await lines(tenant, subscription, 'usage:first')).toEqual(preview);
    const second = await lines(tenant, next, 'usage:second');
    expect(second).toEqual([
      ['api_calls', next.periodStart, 0, 0, false], ['storage_gb', next.periodStart, 0, 0, false],
      ['api_calls', subscription.periodStart, 7, 30, true],
    ]);
    // Billed once: a third billing finds nothing late.
    const third = { ...next, periodStart: next.periodEnd, periodEnd: next.periodEnd + 30 * DAY };
    expect((await lines(tenant, third, 'usage:third')).filter((line) => line[4])).toEqual([]);
  });

  it('records the interval a period ran on and answers it on that period\'s late lines, whatever interval the later billing runs on', async () => {
    const tenant = newTenant();
    // A monthly period cut short a minute ago by a change to yearly (docs/api/usage.md#a-billing-interval-change).
    const monthly = { id: `sub_${randomBytes(8).toString('hex')}`, status: 'active', periodStart: nowSeconds() - 10 * DAY, periodEnd: nowSeconds() + 20 * DAY, metrics: ['api_calls'], updated: nowSeconds() - 10 * DAY };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionCreatedSchema, monthly);
    await record(tenant, monthly.id, { quantity: 12n, timestamp: BigInt(monthly.periodStart + DAY) });
    const cut = nowSeconds() - 60;
    const bill = async (shape: SubscriptionShape, key: string, billingInterval: string, period = { start: shape.periodStart, end: shape.periodEnd }) =>
      (await service.client.getPeriodUsage({ queries: [{ tenant, subscriptionId: shape.id, periodStart: BigInt(period.start), periodEnd: BigInt(period.end), metricNames: shape.metrics, billingKey: key, billingInterval }] }))
        .results[0].lines.map((line) => [Number(line.periodStart), Number(line.quantity), line.late, line.billingInterval]);
    const cutKey = `usage:${monthly.id}:${monthly.periodStart}`;
    expect(await bill(monthly, cutKey, 'monthly', { start: monthly.periodStart, end: cut })).toEqual([[monthly.periodStart, 12, false, 'monthly']]);
    expect(await queryDatabase(service.databaseUrl, 'SELECT billing_interval, period_end FROM usage_billings WHERE billing_key = $1', [cutKey])).toEqual([{ billing_interval: 'monthly', period_end: new Date(cut * 1000) }]);

    const yearly = { ...monthly, periodStart: cut, periodEnd: cut + 365 * DAY, updated: monthly.updated + 1 };
    await publishSubscription(tenant, subscriptionEventsV1.SubscriptionUpdatedSchema, yearly);
    await record(tenant, monthly.id, { quantity: 5n, timestamp: BigInt(cut - 30) });
    // The yearly renewal bills its own period on the yearly allowance and the cut period's late units on the monthly one.
    expect(await bill(yearly, `usage:${monthly.id}:${yearly.periodStart}`, 'yearly')).toEqual([[yearly.periodStart, 0, false, 'yearly'], [monthly.periodStart, 5, true, 'monthly']]);
    // A retry of the cut period's key answers what it billed then, interval included.
    expect(await bill(monthly, cutKey, 'yearly', { start: monthly.periodStart, end: cut })).toEqual([[monthly.periodStart, 12, false, 'monthly']]);
    expect(await grpcFailure(bill(yearly, 'usage:x', 'Yearly!'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'queries[0].billing_interval' });
  });

  it('refuses a malformed query and more than 500 queries', async () => {
    const tenant = newTenant();
    const query = { tenant, subscriptionId: 'sub_x', periodStart: 100n, periodEnd: 50n, metricNames: ['api_calls'], billingKey: '' };
    expect(await grpcFailure(service.client.getPeriodUsage({ queries: [query] }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'queries[0].period_end' });
    const many = Array.from({ length: 501 }, () => ({ ...query, periodEnd: 200n }));
    expect(await grpcFailure(service.client.getPeriodUsage({ queries: many }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'queries' });
  });
});
