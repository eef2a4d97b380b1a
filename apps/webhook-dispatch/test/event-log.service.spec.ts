import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { eventsV1, INTEGRATION_EVENTS, subscriptionEventsV1, webhookDispatchV1 } from '@recur/contracts';
import { SUBSCRIBABLE_EVENT_TYPES } from '@recur/vocabulary';
import {
  type BusMessage,
  consumerGroup,
  encodeEvent,
  type InternalEvent,
  internalEventHandler,
  internalEventsTopic,
  KafkaEventBus,
  newInternalEvent,
  newPublicEvent,
  type OutboxEvent,
  publicEventsTopic,
} from '@recur/messaging';
import { eventually, queryDatabase, type ServiceUnderTest, startServiceUnderTest, startWebhookReceiver, testKafkaBrokers, type WebhookReceiver } from '@recur/testing';

/**
 * webhook-dispatch as its own process on a real PostgreSQL database, reading a real Kafka
 * broker: only public events of the specification's types reach the event log and an
 * endpoint. Everything else published where it could look is dropped.
 */
const namespace = `event-log-${randomBytes(4).toString('hex')}`;
const env = { KAFKA_TOPIC_PREFIX: namespace };
const tenant = { accountId: `acct_${randomBytes(4).toString('hex')}`, livemode: false };
let service: ServiceUnderTest<typeof webhookDispatchV1.WebhookDispatchService>;
let receiver: WebhookReceiver;
let bus: KafkaEventBus;

beforeAll(async () => {
  const brokers = await testKafkaBrokers();
  receiver = await startWebhookReceiver();
  service = await startServiceUnderTest('webhook-dispatch', webhookDispatchV1.WebhookDispatchService, {
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: namespace,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  bus = new KafkaEventBus({ brokers: brokers.split(','), clientId: 'event-log-test' });
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await service?.stop();
  await receiver?.stop();
}, 60_000);

/** A message as the relay publishes an outbox row: the wire JSON, keyed by aggregate. */
const message = (topic: string, event: OutboxEvent): BusMessage => ({
  topic,
  key: event.aggregateId,
  value: JSON.stringify(encodeEvent(event)),
  headers: { 'event-id': event.id, 'event-type': event.type },
});

async function consumedCount(type: string, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`recur_events_consumed_total{service="webhook-dispatch",type="${type}",outcome="${outcome}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('webhook-dispatch event log', () => {
  it('records and delivers only public events; internal events never reach the event log nor an endpoint', async () => {
    const { endpoint } = await service.client.createEndpoint({ tenant, url: `${receiver.url}/hooks/all`, events: Object.keys(SUBSCRIBABLE_EVENT_TYPES) });
    const customerId = `cus_${randomBytes(6).toString('hex')}`;
    const customer = { id: customerId, livemode: false, name: 'Ada', email: 'ada@example.com', created: 1n, updated: 1n };
    const internal = newInternalEvent(tenant, customerId, subscriptionEventsV1.CustomerCreatedSchema, { customer }, new Date());
    const notPublic = (type: string) => create(eventsV1.PublicEventSchema, { ...newPublicEvent(tenant, 'customer.created', customerId, { object: { id: customerId } }, new Date()), type });
    const genuine = newPublicEvent(tenant, 'customer.created', customerId, { object: { id: customerId, object: 'customer' } }, new Date());

    // An integration event goes to the producer's internal topic, which another service reads.
    const readByAnotherService: InternalEvent[] = [];
    await bus.subscribe(consumerGroup('another-service', env), [internalEventsTopic('subscription', env)], internalEventHandler('another-service', INTEGRATION_EVENTS, async (event) => {
      readByAnotherService.push(event);
      return 'processed';
    }));
    await bus.publish([message(internalEventsTopic('subscription', env), internal)]);

    // On the public topic, one key (one partition, consumed in order): what must be dropped, then the genuine event.
    const publicTopic = publicEventsTopic('subscription', env);
    await bus.publish([
      { topic: publicTopic, key: customerId, value: 'not an event', headers: {} },
      message(publicTopic, internal),
      message(publicTopic, notPublic('subscription.renewal_due')),
      message(publicTopic, notPublic('webhook.test')),
      message(publicTopic, genuine),
    ]);

    const deliveries = await eventually(async () => {
      const received = await receiver.received('/hooks/all');
      return received.length > 0 ? received : undefined;
    }, 60_000, 'the genuine event delivered');
    expect(deliveries.map((delivery) => JSON.parse(delivery.body).id)).toEqual([genuine.id]);
    expect(JSON.parse(deliveries[0].body)).toEqual({ id: genuine.id, type: 'customer.created', created: Number(genuine.created), livemode: false, data: { object: { id: customerId, object: 'customer' } } });

    const { events } = await service.client.listEvents({ tenant, page: { limit: 100 } });
    expect(events.map((event) => event.id)).toEqual([genuine.id]);
    expect((await service.client.listDeliveries({ tenant, endpointId: endpoint!.id, page: { limit: 100 } })).deliveries.map((delivery) => delivery.eventId)).toEqual([genuine.id]);

    // The dropped ones were consumed and refused, not merely still on their way (at least
    // once: a consumer-group rebalance may hand a message over twice).
    expect(await consumedCount('recur.subscription.v1.CustomerCreated', 'refused')).toBeGreaterThanOrEqual(1);
    expect(await consumedCount('subscription.renewal_due', 'refused')).toBeGreaterThanOrEqual(1);
    expect(await consumedCount('webhook.test', 'refused')).toBeGreaterThanOrEqual(1);
    expect(await consumedCount('unknown', 'malformed')).toBeGreaterThanOrEqual(1);
    expect(await consumedCount('customer.created', 'processed')).toBe(1);

    // The internal event was really on the bus, typed, for the services it is meant for.
    await eventually(async () => (readByAnotherService.length > 0 ? true : undefined), 60_000, 'the internal event read by another service');
    expect(readByAnotherService.map((event) => [event.id, event.type])).toEqual([[internal.id, 'recur.subscription.v1.CustomerCreated']]);
  }, 120_000);

  it('records a redelivered public event once', async () => {
    const customerId = `cus_${randomBytes(6).toString('hex')}`;
    const event = newPublicEvent(tenant, 'customer.deleted', customerId, { object: { id: customerId, deleted: true } }, new Date());
    const topic = publicEventsTopic('subscription', env);
    await bus.publish([message(topic, event), message(topic, event)]);
    await eventually(async () => ((await consumedCount('customer.deleted', 'duplicate')) === 1 ? true : undefined), 60_000, 'the repeat seen as a duplicate');
    const { events } = await service.client.listEvents({ tenant, page: { limit: 100 }, type: 'customer.deleted' });
    expect(events.map((recorded) => recorded.id)).toEqual([event.id]);
  }, 90_000);

  it('finds by resource the events a release before object_id recorded (none set), and says it applied the filters', async () => {
    const [customerId, otherId] = [`cus_${randomBytes(6).toString('hex')}`, `cus_${randomBytes(6).toString('hex')}`];
    const events = [customerId, otherId].map((id) => newPublicEvent(tenant, 'customer.updated', id, { object: { id } }, new Date()));
    await bus.publish(events.map((event) => message(publicEventsTopic('subscription', env), event)));
    const listed = () => service.client.listEvents({ tenant, page: { limit: 100 }, objectId: customerId });
    await eventually(async () => ((await listed()).events.length === 1 ? true : undefined), 60_000, 'the event recorded');
    // As webhook-dispatch 0.1.0 records them, and its replicas still do during a rollout.
    await queryDatabase(service.databaseUrl, 'UPDATE events SET object_id = NULL WHERE id = ANY($1)', [events.map((event) => event.id)]);
    const answer = await listed();
    expect(answer.events.map((recorded) => recorded.id)).toEqual([events[0].id]);
    expect(answer.filtersApplied).toBe(true);
  }, 90_000);
});
