import { createTestDatabase, eventually, sleep } from '@recur/testing';
import { Pool } from 'pg';
import { type BusMessage, DEFAULT_OUTBOX_RETENTION_MS, InProcessEventBus, OUTBOX_RELAY_LOCK_KEY, OutboxRelay, PURGE_PUBLISHED_SQL } from '../src';
import { createMessagingTables } from './support';

jest.setTimeout(30_000);

const NOW = new Date('2031-03-01T00:00:00.000Z');
const HOUR_MS = 60 * 60 * 1000;
const TOPIC = 'recur.widgets.public';

let databaseUrl: string;
let pool: Pool;
const running: OutboxRelay[] = [];

beforeAll(async () => {
  databaseUrl = await createTestDatabase('purge');
  pool = new Pool({ connectionString: databaseUrl, max: 4 });
  await createMessagingTables(databaseUrl);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((relay) => relay.stop()));
  await pool.query('TRUNCATE outbox_events');
});
afterAll(() => pool.end());

/** Rows as the relay leaves them: `published_at` null for a row still to publish. */
async function outboxRows(prefix: string, count: number, publishedAt: Date | null): Promise<void> {
  await pool.query(
    `INSERT INTO outbox_events (id, topic, key, type, payload, headers, created_at, published_at)
     SELECT $1 || lpad(n::text, 5, '0'), $2, 'key', 'widget.created', '{}', '{}', coalesce($4::timestamptz, $5::timestamptz), $4::timestamptz FROM generate_series(1, $3::int) AS n`,
    [prefix, TOPIC, count, publishedAt, new Date(NOW.getTime() - 48 * HOUR_MS)],
  );
}
const ids = async () => (await pool.query<{ id: string }>('SELECT id FROM outbox_events ORDER BY seq')).rows.map((row) => row.id);

async function startRelay(options: { clock?: () => Date; retentionMs?: number; idlePollMs?: number } = {}) {
  const bus = new InProcessEventBus();
  const received: BusMessage[] = [];
  await bus.subscribe('widgets-consumer', [TOPIC], async (message) => void received.push(message));
  bus.open();
  const relay = new OutboxRelay({ service: 'widgets', databaseUrl, bus, clock: options.clock ?? (() => NOW), retentionMs: options.retentionMs, idlePollMs: options.idlePollMs ?? 100 });
  running.push(relay);
  await relay.start();
  return { relay, received };
}

describe('outbox purge', () => {
  it('keeps published rows 24 hours', () => {
    expect(DEFAULT_OUTBOX_RETENTION_MS).toBe(24 * HOUR_MS);
  });

  it('deletes the rows published longer ago than the retention, in batches, and keeps the younger ones and what it still had to publish', async () => {
    await outboxRows('evt_old_', 2_500, new Date(NOW.getTime() - DEFAULT_OUTBOX_RETENTION_MS - 1));
    await outboxRows('evt_young_', 1, new Date(NOW.getTime() - DEFAULT_OUTBOX_RETENTION_MS + 60_000));
    // Written two days ago and never published (the relay was down): published now, then kept a day.
    await outboxRows('evt_late_', 1, null);
    // A poll far away: after a full batch it purges again at once, not at its next poll.
    const { received } = await startRelay({ idlePollMs: 60_000 });
    await eventually(async () => (await ids()).length === 2, 10_000, 'the expired rows deleted');
    expect(await ids()).toEqual(['evt_young_00001', 'evt_late_00001']);
    expect(received).toHaveLength(1);
    const late = await pool.query<{ published_at: Date }>("SELECT published_at FROM outbox_events WHERE id = 'evt_late_00001'");
    expect(late.rows[0].published_at).toEqual(NOW);
    // However often it looks again, younger rows stay.
    await sleep(300);
    expect(await ids()).toEqual(['evt_young_00001', 'evt_late_00001']);
  });

  it('purges only while it holds the relay lock: a replica that does not hold it deletes nothing', async () => {
    await outboxRows('evt_old_', 10, new Date(NOW.getTime() - 48 * HOUR_MS));
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [OUTBOX_RELAY_LOCK_KEY]);
      await startRelay();
      await sleep(500);
      expect(await ids()).toHaveLength(10);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    await eventually(async () => (await ids()).length === 0, 10_000, 'the expired rows deleted once the lock is free');
  });

  it('deletes a row once it expires while running, by its clock and the configured retention', async () => {
    let now = NOW;
    await outboxRows('evt_ageing_', 1, NOW);
    await startRelay({ clock: () => now, retentionMs: HOUR_MS });
    await sleep(300);
    expect(await ids()).toEqual(['evt_ageing_00001']);
    // Past the retention and past the pause after a purge that found nothing.
    now = new Date(NOW.getTime() + HOUR_MS + 61_000);
    await eventually(async () => (await ids()).length === 0, 10_000, 'the row deleted once expired');
  });

  it('never deletes an unpublished row, however old', async () => {
    await outboxRows('evt_waiting_', 3, null);
    await outboxRows('evt_sent_', 1, new Date(NOW.getTime() - 48 * HOUR_MS));
    const { rowCount } = await pool.query(PURGE_PUBLISHED_SQL, [new Date(NOW.getTime() + 365 * 24 * HOUR_MS), 1000]);
    expect(rowCount).toBe(1);
    expect(await ids()).toEqual(['evt_waiting_00001', 'evt_waiting_00002', 'evt_waiting_00003']);
  });
});
