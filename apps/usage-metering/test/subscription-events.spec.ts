import { randomBytes } from 'node:crypto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { subscriptionEventsV1, usageMeteringV1 } from '@recur/contracts';
import { type BusMessage, encodeEvent, internalEventsTopic, KafkaEventBus, newInternalEvent } from '@recur/messaging';
import { eventually, queryDatabase, type ServiceUnderTest, startServiceUnderTest, testKafkaBrokers } from '@recur/testing';

/**
 * usage-metering's subscription events consumer takes a partition's events a batch at a time
 * (one inbox claim and one transaction for the batch): its own process on a real PostgreSQL
 * database, the events published to a real Kafka broker as the subscription service's relay
 * publishes them, each test's events in one publish so that they reach the consumer together.
 */
jest.setTimeout(120_000);

const FAULT_KILL_BEFORE_COMMIT = 'RECUR_FAULT_USAGE_VIEWS_KILL_BEFORE_COMMIT';
const namespace = `usage-batch-${randomBytes(4).toString('hex')}`;
let service: ServiceUnderTest<typeof usageMeteringV1.UsageMeteringService>;
let bus: KafkaEventBus;

beforeAll(async () => {
  const brokers = await testKafkaBrokers();
  // The first batch the consumer writes is killed before its commit (the crash test runs first).
  service = await startServiceUnderTest('usage-metering', usageMeteringV1.UsageMeteringService, { KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: namespace, [FAULT_KILL_BEFORE_COMMIT]: '1' });
  bus = new KafkaEventBus({ brokers: brokers.split(','), clientId: 'usage-batch-test' });
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await service?.stop();
}, 60_000);

const tenant = { accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false };
const DAY = 86_400;
const MONTH = 30 * DAY;
const START = Math.floor(Date.now() / 1000) - 3 * MONTH;

interface Fact {
  schema: typeof subscriptionEventsV1.SubscriptionCreatedSchema | typeof subscriptionEventsV1.SubscriptionActivatedSchema | typeof subscriptionEventsV1.SubscriptionPausedSchema;
  subscriptionId: string;
  status: string;
  /** Which month since START the current period is. */
  period: number;
  updated: number;
  /** The Kafka key, when not the subscription's id (a marker on another subscription's partition). */
  key?: string;
}

/** One subscription event as the relay publishes it. */
function message({ schema, subscriptionId, status, period, updated, key }: Fact): BusMessage {
  const subscription = {
    id: subscriptionId, livemode: false, customerId: 'cus_test', planId: 'plan_test', status, billingInterval: 'monthly', quantity: 1,
    price: { planName: 'Metered', pricingModel: 'flat_rate', amountMonthly: { amountMinor: 0n, currency: 'usd' }, packageSize: 1, components: [{ id: 'pc_0', type: 'metered', name: 'API', metricName: 'api_calls', unitAmount: 5n, includedQuantity: 10n }] },
    currentPeriodStart: BigInt(START + period * MONTH), currentPeriodEnd: BigInt(START + (period + 1) * MONTH), periodsBilled: period + 1, created: BigInt(START), updated: BigInt(updated),
  };
  const event = newInternalEvent(tenant, subscriptionId, schema, { subscription } as MessageInitShape<typeof subscriptionEventsV1.SubscriptionCreatedSchema>, new Date());
  return { topic: internalEventsTopic('subscription', { KAFKA_TOPIC_PREFIX: namespace }), key: key ?? subscriptionId, value: JSON.stringify(encodeEvent(event)), headers: { 'event-id': event.id, 'event-type': event.type } };
}

const eventId = (published: BusMessage) => published.headers['event-id'];
const inboxCount = async (ids: string[]) =>
  Number((await queryDatabase<{ n: string }>(service.databaseUrl, 'SELECT count(*) AS n FROM inbox_events WHERE event_id = ANY($1::text[])', [ids]))[0].n);
const consumed = (published: BusMessage) => eventually(async () => (await inboxCount([eventId(published)])) > 0 || undefined, 60_000, `event ${eventId(published)} consumed`);
const view = async (id: string) => (await queryDatabase<{ status: string; current_period_start: Date; previous_period_start: Date | null }>(
  service.databaseUrl, 'SELECT status, current_period_start, previous_period_start FROM subscription_views WHERE id = $1', [id]))[0];
const periodStart = (period: number) => new Date((START + period * MONTH) * 1000);
const newSubscriptionId = () => `sub_${randomBytes(8).toString('hex')}`;

it('a batch killed before its commit leaves nothing; redelivered after the restart, each event applies once, in order', async () => {
  const id = newSubscriptionId();
  const batch = [
    message({ schema: subscriptionEventsV1.SubscriptionCreatedSchema, subscriptionId: id, status: 'active', period: 0, updated: START }),
    message({ schema: subscriptionEventsV1.SubscriptionActivatedSchema, subscriptionId: id, status: 'active', period: 1, updated: START + MONTH }),
    message({ schema: subscriptionEventsV1.SubscriptionActivatedSchema, subscriptionId: id, status: 'active', period: 2, updated: START + 2 * MONTH }),
  ];
  await bus.publish(batch);
  // RECUR_FAULT_USAGE_VIEWS_KILL_BEFORE_COMMIT=1: the process dies in the batch's transaction.
  await service.app.exited();
  expect(await inboxCount(batch.map(eventId))).toBe(0);
  expect(await view(id)).toBeUndefined();

  await service.app.restart({ [FAULT_KILL_BEFORE_COMMIT]: '' });
  await consumed(batch[2]);
  expect(await inboxCount(batch.map(eventId))).toBe(3);
  // Applied one after the other: the second period is the previous one of the third.
  expect(await view(id)).toEqual({ status: 'active', current_period_start: periodStart(2), previous_period_start: periodStart(1) });
});

it('applies a batch in order and each event once, a repeat within the batch too', async () => {
  const id = newSubscriptionId();
  const created = message({ schema: subscriptionEventsV1.SubscriptionCreatedSchema, subscriptionId: id, status: 'active', period: 0, updated: START });
  const renewed = message({ schema: subscriptionEventsV1.SubscriptionActivatedSchema, subscriptionId: id, status: 'active', period: 1, updated: START + MONTH });
  const renewedAgain = message({ schema: subscriptionEventsV1.SubscriptionActivatedSchema, subscriptionId: id, status: 'active', period: 2, updated: START + 2 * MONTH });
  await bus.publish([created, renewed, renewed, renewedAgain]);
  await consumed(renewedAgain);
  expect(await inboxCount([created, renewed, renewedAgain].map(eventId))).toBe(3);
  expect(await view(id)).toEqual({ status: 'active', current_period_start: periodStart(2), previous_period_start: periodStart(1) });
});

it('an event delivered again changes nothing, even after a later event of the same second', async () => {
  const id = newSubscriptionId();
  // Renewed and paused within one second: both carry the same `updated`, so only the inbox tells the renewal was applied.
  const renewed = message({ schema: subscriptionEventsV1.SubscriptionActivatedSchema, subscriptionId: id, status: 'active', period: 1, updated: START + MONTH });
  const paused = message({ schema: subscriptionEventsV1.SubscriptionPausedSchema, subscriptionId: id, status: 'paused', period: 1, updated: START + MONTH });
  await bus.publish([renewed, paused]);
  await consumed(paused);
  expect((await view(id)).status).toBe('paused');

  // The renewal again (a relay that died before stamping it publishes it again), then a marker on
  // the same partition: once the marker is in, the renewal was handled.
  const marker = message({ schema: subscriptionEventsV1.SubscriptionCreatedSchema, subscriptionId: newSubscriptionId(), status: 'active', period: 0, updated: START, key: id });
  await bus.publish([renewed, marker]);
  await consumed(marker);
  expect(await inboxCount([renewed, paused].map(eventId))).toBe(2);
  expect((await view(id)).status).toBe('paused');
});
