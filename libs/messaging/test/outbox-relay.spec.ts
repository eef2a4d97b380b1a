import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PgTransactions } from '@recur/persistence';
import { createTestDatabase, eventually, recordingPool, sleep } from '@recur/testing';
import { Client, Pool } from 'pg';
import {
  appendToOutbox, type BusMessage, claimInboxEvent, decodePublicEvent, FAULT_KILL_AFTER_PUBLISH, InProcessEventBus, newPublicEvent, OUTBOX_CHANNEL, OutboxRelay, type PublicEvent, publicEventsTopic,
} from '../src';
import { createMessagingTables, pgTransaction } from './support';

jest.setTimeout(30_000);

const PRODUCER = 'widgets';
const TOPIC = publicEventsTopic(PRODUCER);
const tenant = { accountId: 'acct_1', livemode: false };
/** The relay's clock: every stamp must carry its time, not the database's. */
const RELAY_TIME = new Date('2031-03-01T00:00:00.000Z');

let databaseUrl: string;
let pool: Pool;
const running: OutboxRelay[] = [];

beforeAll(async () => {
  databaseUrl = await createTestDatabase('messaging');
  pool = new Pool({ connectionString: databaseUrl, max: 8 });
  await createMessagingTables(databaseUrl);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((relay) => relay.stop().catch(() => undefined)));
  await pool.query('TRUNCATE outbox_events, inbox_events, widgets, widget_events_seen, publish_log');
});
afterAll(() => pool.end());

function startRelay(bus: InProcessEventBus): OutboxRelay {
  const relay = new OutboxRelay({ service: 'widgets', databaseUrl, bus, clock: () => RELAY_TIME, idlePollMs: 100 });
  running.push(relay);
  void relay.start();
  return relay;
}

/** A relay that has found nothing to publish and sleeps until a wake-up or its poll. */
async function idleRelay(bus: InProcessEventBus, idlePollMs: number): Promise<OutboxRelay> {
  const relay = new OutboxRelay({ service: 'widgets', databaseUrl, bus, clock: () => RELAY_TIME, idlePollMs });
  running.push(relay);
  await relay.start();
  await sleep(300);
  return relay;
}

/** Creates widgets and their events in one transaction, committed or rolled back. */
async function createWidgets(ids: string[], outcome: 'COMMIT' | 'ROLLBACK' = 'COMMIT'): Promise<PublicEvent[]> {
  const events = ids.map((id) => newPublicEvent(tenant, 'customer.created', id, { object: { id } }, new Date()));
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const id of ids) await client.query('INSERT INTO widgets (id) VALUES ($1)', [id]);
    await appendToOutbox(pgTransaction(client), PRODUCER, events);
    await client.query(outcome);
  } finally {
    client.release();
  }
  return events;
}

const outbox = async () => (await pool.query<{ id: string; published_at: Date | null }>('SELECT id, published_at FROM outbox_events ORDER BY seq')).rows;
/** A bus with one consumer group; `received` lists what the relay published, in order. */
async function recordingBus(onMessage: (message: BusMessage) => Promise<void> = async () => undefined) {
  const bus = new InProcessEventBus();
  const received: BusMessage[] = [];
  await bus.subscribe('widgets-consumer', [TOPIC], async (message) => {
    received.push(message);
    await onMessage(message);
  });
  bus.open();
  return Object.assign(bus, { received });
}

describe('outbox', () => {
  it('holds an event exactly when its change committed, and wakes the relay only at commit', async () => {
    const listener = new Client({ connectionString: databaseUrl });
    await listener.connect();
    try {
      let notifications = 0;
      listener.on('notification', () => (notifications += 1));
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      await createWidgets(['w_rolled_back'], 'ROLLBACK');
      const [committed] = await createWidgets(['w_committed']);
      await eventually(async () => notifications > 0, 5_000, 'the commit notification');
      // Notifications arrive in commit order: one for the rolled-back transaction would have come first.
      expect(notifications).toBe(1);
      expect(await outbox()).toEqual([{ id: committed.id, published_at: null }]);
      expect((await pool.query('SELECT id FROM widgets')).rows).toEqual([{ id: 'w_committed' }]);
    } finally {
      await listener.end();
    }
  });

  it('on a transaction that can notify after its COMMIT (PgTransactions), wakes the relay after it, not inside it', async () => {
    const { pool: ownPool, statements } = recordingPool(databaseUrl);
    try {
      await new PgTransactions(ownPool).transaction(async (tx) => {
        await tx.execute('INSERT INTO widgets (id) VALUES ($1)', ['w_after_commit']);
        await appendToOutbox(tx, PRODUCER, [newPublicEvent(tenant, 'customer.created', 'w_after_commit', { object: { id: 'w_after_commit' } }, new Date())]);
      });
      // The command answers without waiting for its wake-up, which follows on the pool.
      await eventually(async () => (statements.includes('SELECT pg_notify($1, $2)') ? true : undefined), 5_000, 'the wake-up');
    } finally {
      await ownPool.end();
    }
    const committed = statements.indexOf('COMMIT');
    expect(statements.slice(0, committed).filter((sql) => /notify/i.test(sql))).toEqual([]);
    expect(statements.slice(committed + 1)).toEqual(['SELECT pg_notify($1, $2)']);
    expect((await outbox()).map((row) => row.published_at)).toEqual([null]);
  });
});

describe('OutboxRelay', () => {
  it('wakes at once for events of a transaction that notifies after its COMMIT (PgTransactions)', async () => {
    const bus = await recordingBus();
    // A poll far beyond the test's patience: only the wake-up can publish in time.
    await idleRelay(bus, 60_000);
    const event = newPublicEvent(tenant, 'customer.created', 'w_fast', { object: { id: 'w_fast' } }, new Date());
    await new PgTransactions(pool).transaction(async (tx) => {
      await tx.execute('INSERT INTO widgets (id) VALUES ($1)', ['w_fast']);
      await appendToOutbox(tx, PRODUCER, [event]);
    });
    await eventually(async () => bus.received.length > 0, 5_000, 'the publish after the wake-up');
    expect(bus.received.map((message) => message.headers['event-id'])).toEqual([event.id]);
  });

  it('publishes events whose wake-up was lost (the process died between COMMIT and NOTIFY) at its next poll', async () => {
    const bus = await recordingBus();
    await idleRelay(bus, 1_000);
    const event = newPublicEvent(tenant, 'customer.created', 'w_lost', { object: { id: 'w_lost' } }, new Date());
    // The rows commit, and no NOTIFY ever follows.
    await new PgTransactions(pool).transaction(async (tx) => {
      await appendToOutbox({ execute: (sql, values) => tx.execute(sql, values), notifyAfterCommit: () => undefined }, PRODUCER, [event]);
    });
    await eventually(async () => bus.received.length > 0, 5_000, 'the publish at the poll');
    expect(bus.received.map((message) => message.headers['event-id'])).toEqual([event.id]);
  });

  it('publishes in commit order, keyed by aggregate, and stamps every row with its clock', async () => {
    const bus = await recordingBus();
    const events = [...(await createWidgets(['w_a', 'w_b'])), ...(await createWidgets(['w_c'])), ...(await createWidgets(['w_d', 'w_e']))];
    startRelay(bus);
    await eventually(async () => (await outbox()).every((row) => row.published_at), 10_000, 'stamps');
    expect(bus.received.map((message) => decodePublicEvent(message.value))).toEqual(events);
    expect(bus.received.map((message) => [message.topic, message.key, message.headers['event-id']])).toEqual(events.map((event) => [TOPIC, event.aggregateId, event.id]));
    expect((await outbox()).map((row) => row.published_at)).toEqual(events.map(() => RELAY_TIME));
  });

  it('publishes again after a restart what it published but could not stamp, and the inbox drops the repeat', async () => {
    let terminated = 0;
    const first: { relay?: OutboxRelay } = {};
    let firstStopped: Promise<void> | undefined;
    const bus = await recordingBus(async (message) => {
      if (firstStopped === undefined) {
        // The stamp will fail: the relay's connection (idle in its transaction while it
        // publishes) is cut. The first relay is also told to stop, as if its process died.
        const { rowCount } = await pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`,
        );
        terminated = rowCount ?? 0;
        firstStopped = first.relay!.stop();
      }
      const event = decodePublicEvent(message.value);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        if (await claimInboxEvent(pgTransaction(client), 'widgets-consumer', event.id)) await client.query('INSERT INTO widget_events_seen (event_id) VALUES ($1)', [event.id]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    const [event] = await createWidgets(['w_once']);
    first.relay = startRelay(bus);
    await eventually(async () => firstStopped !== undefined, 10_000, 'the first publish');
    await firstStopped;
    expect(terminated).toBe(1);
    expect(bus.received).toHaveLength(1);
    expect(await outbox()).toEqual([{ id: event.id, published_at: null }]);

    startRelay(bus);
    await eventually(async () => (await outbox())[0].published_at, 10_000, 'the stamp after the restart');
    expect(bus.received.map((message) => message.headers['event-id'])).toEqual([event.id, event.id]);
    expect((await pool.query('SELECT event_id FROM widget_events_seen')).rows).toEqual([{ event_id: event.id }]);
  });

  it('with two relays on one database, publishes one batch at a time and nothing twice', async () => {
    let publishing = 0;
    let mostAtOnce = 0;
    const relayedBy: Record<string, number> = { first: 0, second: 0 };
    const received: string[] = [];
    const twoBuses = await Promise.all(
      Object.keys(relayedBy).map((name) =>
        recordingBus(async (message) => {
          publishing += 1;
          mostAtOnce = Math.max(mostAtOnce, publishing);
          await sleep(2);
          received.push(message.headers['event-id']);
          relayedBy[name] += 1;
          publishing -= 1;
        }),
      ),
    );
    const relays: Record<string, OutboxRelay> = { first: startRelay(twoBuses[0]), second: startRelay(twoBuses[1]) };
    const events: PublicEvent[] = [];
    for (let i = 0; i < 15; i++) {
      events.push(...(await createWidgets([`w_${i}_a`, `w_${i}_b`, `w_${i}_c`])));
      await sleep(20);
      if (i === 7) {
        // Whichever relay wakes first can win every batch of the first half while the other waits on
        // the lock; if one has published nothing yet, the other stops (its batch done) and it must take over.
        await eventually(async () => relayedBy.first + relayedBy.second > 0, 20_000, 'a first batch');
        const [idle] = Object.keys(relayedBy).filter((name) => relayedBy[name] === 0);
        if (idle) await relays[idle === 'first' ? 'second' : 'first'].stop();
      }
    }
    await eventually(async () => (await outbox()).every((row) => row.published_at), 20_000, 'all stamps');
    expect(mostAtOnce).toBe(1);
    expect(received).toEqual(events.map((event) => event.id));
    expect(relayedBy.first + relayedBy.second).toBe(45);
    expect(relayedBy.first).toBeGreaterThan(0);
    expect(relayedBy.second).toBeGreaterThan(0);
  });

  it(`dies by SIGKILL after its n-th published batch, before the stamp, when ${FAULT_KILL_AFTER_PUBLISH} is set`, async () => {
    const [event] = await createWidgets(['w_killed']);
    // The relay of another process, built from dist/ as the apps run it, with the fault armed.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const { InProcessEventBus, OutboxRelay } = require('@recur/messaging');
         const { Pool } = require('pg');
         const pool = new Pool({ connectionString: process.env.DATABASE_URL });
         const bus = new InProcessEventBus();
         bus.subscribe('log', ['${TOPIC}'], (message) => pool.query("INSERT INTO publish_log VALUES ($1, 'child')", [message.headers['event-id']]).then(() => undefined));
         bus.open();
         new OutboxRelay({ service: 'widgets', databaseUrl: process.env.DATABASE_URL, bus, clock: () => new Date() }).start();`,
      ],
      { cwd: join(__dirname, '../../..'), env: { ...process.env, DATABASE_URL: databaseUrl, [FAULT_KILL_AFTER_PUBLISH]: '1' }, stdio: 'inherit' },
    );
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])));
    // A child that did not kill itself is stopped here (SIGTERM), which the assertion tells apart.
    const deadline = setTimeout(() => child.kill('SIGTERM'), 15_000);
    const [code, signal] = await exited.finally(() => clearTimeout(deadline));
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGKILL' });
    expect((await pool.query('SELECT event_id, publisher FROM publish_log')).rows).toEqual([{ event_id: event.id, publisher: 'child' }]);
    expect(await outbox()).toEqual([{ id: event.id, published_at: null }]);

    // This process has no fault armed: its relay publishes the row again and stamps it.
    const bus = await recordingBus();
    startRelay(bus);
    await eventually(async () => (await outbox())[0].published_at, 10_000, 'the stamp');
    expect(bus.received.map((message) => message.headers['event-id'])).toEqual([event.id]);
  });
});

describe('inbox', () => {
  it('claims an event id once per consumer, and a rolled-back claim never happened', async () => {
    const claim = async (consumer: string, eventId: string, outcome: 'COMMIT' | 'ROLLBACK' = 'COMMIT') => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const fresh = await claimInboxEvent(pgTransaction(client), consumer, eventId);
        await client.query(outcome);
        return fresh;
      } finally {
        client.release();
      }
    };
    expect(await claim('billing', 'evt_1')).toBe(true);
    expect(await claim('billing', 'evt_1')).toBe(false);
    expect(await claim('webhooks', 'evt_1')).toBe(true);
    expect(await claim('billing', 'evt_2', 'ROLLBACK')).toBe(true);
    expect(await claim('billing', 'evt_2')).toBe(true);
    expect(await claim('billing', 'evt_2')).toBe(false);
  });
});
