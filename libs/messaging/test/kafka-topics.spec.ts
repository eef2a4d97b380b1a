import { randomBytes } from 'node:crypto';
import { createRegistry } from '@bufbuild/protobuf';
import { Kafka } from 'kafkajs';
import { subscriptionEventsV1 } from '@recur/contracts';
import { createTestDatabase, eventually, testKafkaBrokers } from '@recur/testing';
import { Pool } from 'pg';
import {
  appendToOutbox, type BusMessage, consumerGroup, customerEventsTopic, customerEventsTopics, defaultTopicMap, type InternalEvent, internalEventHandler,
  internalEventsTopic, KafkaEventBus, type MessageHandler, newInternalEvent, OutboxRelay,
} from '../src';
import { createMessagingTables, pgTransaction } from './support';

jest.setTimeout(120_000);

/** A namespace of this run's own, so its topics and groups are new on the shared broker. */
const env = { KAFKA_TOPIC_PREFIX: `topics-${randomBytes(4).toString('hex')}` };
const tenant = { accountId: 'acct_1', livemode: false };
const customer = { id: 'cus_1', livemode: false, name: 'Ada', email: 'ada@example.com', created: 1n, updated: 1n };

let databaseUrl: string;
let pool: Pool;
let bus: KafkaEventBus;
let relay: OutboxRelay;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('kafka_topics');
  pool = new Pool({ connectionString: databaseUrl, max: 2 });
  await createMessagingTables(databaseUrl);
  bus = new KafkaEventBus({ brokers: (await testKafkaBrokers()).split(','), clientId: 'kafka-topics-test' });
});
afterAll(async () => {
  await relay?.stop();
  await bus?.close();
  await pool?.end();
});

/** Writes the subscription service's events to its outbox, in one transaction, as the service does. */
async function writeEvents(events: InternalEvent[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await appendToOutbox(pgTransaction(client), 'subscription', events);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/**
 * The consumer's handler behind a gate that counts, per event type, the messages whose value (the
 * JSON to decode) was read: a message skipped by its header is never read, so never decoded.
 */
function countingValueReads(handler: MessageHandler): { handler: MessageHandler; reads: Map<string, number>; delivered: string[] } {
  const reads = new Map<string, number>();
  const delivered: string[] = [];
  return {
    reads,
    delivered,
    handler: async (message: BusMessage) => {
      const type = message.headers['event-type'];
      delivered.push(type);
      const counted: BusMessage = {
        topic: message.topic,
        key: message.key,
        headers: message.headers,
        get value() {
          reads.set(type, (reads.get(type) ?? 0) + 1);
          return message.value;
        },
      };
      await handler(counted);
    },
  };
}

describe('events through Kafka, as the relay publishes them', () => {
  it('carry their type in a header, so a consumer decodes only the types it handles; customer events go to a topic the subscription topic\'s consumers never fetch', async () => {
    const subscriptionId = 'sub_1';
    const created = newInternalEvent(tenant, subscriptionId, subscriptionEventsV1.SubscriptionCreatedSchema, {}, new Date());
    const paused = newInternalEvent(tenant, subscriptionId, subscriptionEventsV1.SubscriptionPausedSchema, {}, new Date());
    const cancelled = newInternalEvent(tenant, subscriptionId, subscriptionEventsV1.SubscriptionCancelledSchema, {}, new Date());
    const customerCreated = newInternalEvent(tenant, customer.id, subscriptionEventsV1.CustomerCreatedSchema, { customer }, new Date());
    await writeEvents([created, customerCreated, paused, cancelled]);

    // A consumer of the subscription topic that handles SubscriptionCreated and SubscriptionCancelled only.
    const handled: string[] = [];
    const subscriptions = countingValueReads(internalEventHandler('test', createRegistry(subscriptionEventsV1.SubscriptionCreatedSchema, subscriptionEventsV1.SubscriptionCancelledSchema), async (event) => {
      handled.push(event.id);
      return 'processed';
    }));
    await bus.subscribe(consumerGroup('subscription-reader', env), [internalEventsTopic('subscription', env)], subscriptions.handler);
    // A consumer of customer events, on both topics of the transition.
    const customerEvents: string[] = [];
    await bus.subscribe(consumerGroup('customer-reader', env), customerEventsTopics(env), internalEventHandler('test', createRegistry(subscriptionEventsV1.CustomerCreatedSchema), async (event) => {
      customerEvents.push(event.id);
      return 'processed';
    }));

    relay = new OutboxRelay({ service: 'subscription', databaseUrl, bus, clock: () => new Date(), idlePollMs: 100, topics: (route) => defaultTopicMap(route, env) });
    void relay.start();

    await eventually(async () => handled.length === 2 && customerEvents.length === 1, 90_000, 'both consumers handled their events');
    expect(handled).toEqual([created.id, cancelled.id]);
    expect(customerEvents).toEqual([customerCreated.id]);
    // The subscription topic's consumer was handed no customer event, and read the value of no event it does not handle.
    const typeName = (schema: { typeName: string }) => schema.typeName;
    expect(subscriptions.delivered).toEqual([created, paused, cancelled].map((event) => event.type));
    expect(Object.fromEntries(subscriptions.reads)).toEqual({
      [typeName(subscriptionEventsV1.SubscriptionCreatedSchema)]: 1,
      [typeName(subscriptionEventsV1.SubscriptionCancelledSchema)]: 1,
    });
    expect(customerEventsTopic(env)).toBe(`${env.KAFKA_TOPIC_PREFIX}.subscription.customers.internal`);
  });

  it('create a topic no consumer has created yet with the partitions consumers create, not the broker\'s default of one', async () => {
    const topic = customerEventsTopic({ KAFKA_TOPIC_PREFIX: `topics-${randomBytes(4).toString('hex')}` });
    await bus.publish([{ topic, key: customer.id, value: '{}', headers: { 'event-type': subscriptionEventsV1.CustomerCreatedSchema.typeName } }]);
    const admin = new Kafka({ clientId: 'kafka-topics-test-admin', brokers: (await testKafkaBrokers()).split(',') }).admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics[0].partitions).toHaveLength(3);
    } finally {
      await admin.disconnect();
    }
  });
});
