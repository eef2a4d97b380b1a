import { createTestDatabase, eventually } from '@recur/testing';
import { Pool } from 'pg';
import {
  appendToOutbox, type BusMessage, defaultTopicMap, InProcessEventBus, newPublicEvent, OutboxRelay, publicEventsTopic, type TopicMap,
} from '../src';
import { createMessagingTables, pgTransaction } from './support';

jest.setTimeout(30_000);

const PRODUCER = 'widgets';
const OLD_TOPIC = publicEventsTopic(PRODUCER);
/** A later release's map: customer events split from the producer's public topic onto their own. */
const SPLIT_TOPIC = `${OLD_TOPIC}.customers`;
const splitTopicMap: TopicMap = (route, env) => (route.kind === 'public' && route.type.startsWith('customer.') ? SPLIT_TOPIC : defaultTopicMap(route, env));
const tenant = { accountId: 'acct_1', livemode: false };

let databaseUrl: string;
let pool: Pool;
const running: OutboxRelay[] = [];

beforeAll(async () => {
  databaseUrl = await createTestDatabase('outbox_topics');
  pool = new Pool({ connectionString: databaseUrl, max: 4 });
  await createMessagingTables(databaseUrl);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((relay) => relay.stop()));
  await pool.query('TRUNCATE outbox_events');
});
afterAll(() => pool.end());

/** Rows written and committed with no relay running: they wait in the outbox. */
async function writeEvents(ids: string[]): Promise<string[]> {
  const events = ids.map((id) => newPublicEvent(tenant, 'customer.created', id, { object: { id } }, new Date()));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await appendToOutbox(pgTransaction(client), PRODUCER, events);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  return events.map((event) => event.id);
}

async function relayWith(topics: TopicMap | undefined): Promise<BusMessage[]> {
  const bus = new InProcessEventBus();
  const received: BusMessage[] = [];
  await bus.subscribe('widgets-consumer', [OLD_TOPIC, SPLIT_TOPIC], async (message) => {
    received.push(message);
  });
  bus.open();
  const relay = new OutboxRelay({ service: PRODUCER, databaseUrl, bus, clock: () => new Date(), idlePollMs: 100, topics });
  running.push(relay);
  void relay.start();
  return received;
}

describe('the topic of an outbox row', () => {
  it('is chosen when the row is published: rows written under the old map go to the topic the relay maps them to now', async () => {
    // Written by a release whose map sends customer events to the producer's public topic.
    const written = await writeEvents(['w_1', 'w_2']);
    const [{ topic, producer, kind }] = (await pool.query('SELECT topic, producer, kind FROM outbox_events ORDER BY seq LIMIT 1')).rows;
    expect({ topic, producer, kind }).toEqual({ topic: OLD_TOPIC, producer: PRODUCER, kind: 'public' });

    // Published by a release that split them onto a topic of their own.
    const received = await relayWith(splitTopicMap);
    await eventually(async () => received.length === written.length, 10_000, 'the rows published');
    expect(received.map((message) => [message.headers['event-id'], message.topic])).toEqual(written.map((id) => [id, SPLIT_TOPIC]));
    await eventually(async () => (await pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL')).rows[0].n === 0, 5_000, 'the stamp');
  });

  it("still publishes a row of a release before topic resolution (no producer) to the topic it carries", async () => {
    // As that release wrote it: the topic only. The relay of the split map publishes it where it says.
    await pool.query(
      `INSERT INTO outbox_events (id, topic, key, type, payload, headers) VALUES ('evt_old_release', $1, 'w_3', 'customer.created', '{}', '{"event-id":"evt_old_release"}')`,
      [OLD_TOPIC],
    );
    const [newRow] = await writeEvents(['w_4']);
    const received = await relayWith(splitTopicMap);
    await eventually(async () => received.length === 2, 10_000, 'both rows published');
    expect(received.map((message) => [message.headers['event-id'], message.topic])).toEqual([
      ['evt_old_release', OLD_TOPIC],
      [newRow, SPLIT_TOPIC],
    ]);
  });
});
