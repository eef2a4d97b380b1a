import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { Kafka } from 'kafkajs';
import { eventually, testKafkaBrokers } from '@recur/testing';
import { type BusMessage, KafkaEventBus } from '../src';
import { OFFSET_COMMIT_INTERVAL_MS } from '../src/kafka-bus';
import { KafkaRequestQueue } from '../src/kafkajs-idle-timer';

/** kafkajs's broker connection class, whose `offsetCommit` sends one OffsetCommit request. */
const KafkaBroker = createRequire(require.resolve('kafkajs'))('./src/broker') as { prototype: { offsetCommit(request: { groupId: string }): Promise<unknown> } };

jest.setTimeout(90_000);

let bus: KafkaEventBus;
beforeAll(async () => {
  bus = new KafkaEventBus({ brokers: (await testKafkaBrokers()).split(','), clientId: 'kafka-batch-test' });
});
afterAll(() => bus?.close());

const message = (topic: string, key: string, n: number): BusMessage => ({ topic, key, value: `${key}:${n}`, headers: { 'event-id': `${key}:${n}` } });

describe('KafkaEventBus.subscribeBatch', () => {
  it("hands over a partition's messages in batches, in order per key, and a batch whose handler threw comes back whole", async () => {
    const topic = `batch-${randomBytes(4).toString('hex')}`;
    const keys = ['k_a', 'k_b', 'k_c', 'k_d'];
    const sent = keys.flatMap((key) => Array.from({ length: 25 }, (_, n) => message(topic, key, n)));
    await bus.ensureTopics([topic]);
    await bus.publish(sent);

    const batches: string[][] = [];
    let failed: string[] | undefined;
    await bus.subscribeBatch(`group-${topic}`, [topic], async (messages) => {
      const values = messages.map((received) => received.value);
      if (failed === undefined) {
        failed = values;
        throw new Error('database down');
      }
      batches.push(values);
    });
    await eventually(async () => new Set(batches.flat()).size === sent.length, 60_000, 'every message handled');

    const handled = batches.flat();
    // The failed batch was handed over again, all of it: nothing of it was committed.
    expect(handled).toEqual(expect.arrayContaining(failed!));
    // Several messages per call: a batch, not one message at a time.
    expect(Math.max(...batches.map((batch) => batch.length))).toBeGreaterThan(1);
    // Per key, the first delivery of each message in publish order.
    for (const key of keys) {
      const firstSeen = [...new Set(handled.filter((value) => value.startsWith(`${key}:`)))];
      expect(firstSeen).toEqual(sent.filter((sentMessage) => sentMessage.key === key).map((sentMessage) => sentMessage.value));
    }
  });
});

describe('KafkaEventBus.subscribe', () => {
  it('hands over one message at a time, in order per key, and a message whose handler threw comes again', async () => {
    const topic = `each-${randomBytes(4).toString('hex')}`;
    const sent = Array.from({ length: 6 }, (_, n) => message(topic, 'k_one', n));
    await bus.ensureTopics([topic]);
    await bus.publish(sent);
    const handled: string[] = [];
    let failed = false;
    await bus.subscribe(`group-${topic}`, [topic], async (received) => {
      if (received.value === 'k_one:3' && !failed) {
        failed = true;
        throw new Error('database down');
      }
      handled.push(received.value);
    });
    await eventually(async () => new Set(handled).size === sent.length, 60_000, 'every message handled');
    // Each value's first delivery in publish order; the one that failed was handed over again.
    expect([...new Set(handled)]).toEqual(sent.map((sentMessage) => sentMessage.value));
    expect(failed).toBe(true);
  });
});

/** Each way of consuming, with a handler that records the values it was handed. */
const consumers: [string, (group: string, topic: string, handled: string[]) => Promise<void>][] = [
  ['subscribeBatch', (group, topic, handled) => bus.subscribeBatch(group, [topic], async (messages) => {
    handled.push(...messages.map((received) => received.value));
  })],
  ['subscribe', (group, topic, handled) => bus.subscribe(group, [topic], async (received) => {
    handled.push(received.value);
  })],
];

describe.each(consumers)('KafkaEventBus.%s offset commits', (_, consume) => {
  it('commits at most once an interval while events flow, and what the last batch left once the stream is idle', async () => {
    const topic = `commits-${randomBytes(4).toString('hex')}`;
    const group = `group-${topic}`;
    await bus.ensureTopics([topic]);
    const handled: string[] = [];
    await consume(group, topic, handled);
    await bus.publish([message(topic, 'k_first', 0)]);
    await eventually(async () => handled.length === 1, 60_000, 'the first message handled (the group has joined)');

    const offsetCommit = jest.spyOn(KafkaBroker.prototype, 'offsetCommit');
    const sent = 20;
    try {
      // One message at a time, each its own fetched batch, over about half the interval.
      const started = Date.now();
      for (let n = 1; n <= sent; n++) {
        await bus.publish([message(topic, `k_${n % 4}`, n)]);
        await eventually(async () => handled.length === n + 1, 10_000, `message ${n} handled`);
      }
      const commitsWhileFlowing = offsetCommit.mock.calls.filter(([request]) => request.groupId === group).length;
      // kafkajs's autoCommit (eachBatch and eachMessage alike) sent one OffsetCommit per batch: 20 here.
      expect(commitsWhileFlowing).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / OFFSET_COMMIT_INTERVAL_MS) + 1);
    } finally {
      offsetCommit.mockRestore();
    }

    // Idle now: every handled offset is committed within about an interval, with no batch to carry it.
    const admin = new Kafka({ clientId: 'kafka-batch-test-admin', brokers: (await testKafkaBrokers()).split(',') }).admin();
    await admin.connect();
    try {
      const committed = async () => (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0].partitions.reduce((sum, { offset }) => sum + Math.max(0, Number(offset)), 0);
      await eventually(async () => (await committed()) === sent + 1, 3 * OFFSET_COMMIT_INTERVAL_MS, 'every handled offset committed');
    } finally {
      await admin.disconnect();
    }
  });
});

describe("kafkajs's request queues at rest", () => {
  it('check their pending requests only when there is something to check, not every millisecond', async () => {
    // A bus with a connected producer and a consumer group, both idle once the one message is handled.
    const topic = `idle-${randomBytes(4).toString('hex')}`;
    await bus.ensureTopics([topic]);
    const handled: string[] = [];
    await bus.subscribeBatch(`group-${topic}`, [topic], async (messages) => {
      handled.push(...messages.map((received) => received.value));
    });
    await bus.publish([message(topic, 'k_idle', 0)]);
    await eventually(async () => handled.length === 1, 60_000, 'the message handled');

    const checkPendingRequests = jest.spyOn(KafkaRequestQueue.prototype, 'checkPendingRequests');
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Heartbeats (1 s) and fetches answered by the broker check a queue a few times a second;
      // kafkajs 2.2.4 unpatched re-checked every connection's queue every millisecond (~1 000 a second each).
      expect(checkPendingRequests.mock.calls.length).toBeLessThan(50);
    } finally {
      checkPendingRequests.mockRestore();
    }
  });
});
