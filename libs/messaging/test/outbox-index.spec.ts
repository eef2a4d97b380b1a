import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase } from '@recur/testing';
import { Client } from 'pg';
import { OUTBOX_RELAY_LOCK_KEY, OUTBOX_TABLE, unpublishedBatchSql } from '../src';

jest.setTimeout(60_000);

const APPS = join(__dirname, '../../../apps');
/** Every service whose schema has an outbox, so a new one is checked without editing this list. */
const servicesWithOutbox = readdirSync(APPS).filter((app) => {
  const schema = join(APPS, app, 'prisma/schema.prisma');
  return existsSync(schema) && readFileSync(schema, 'utf8').includes(`@@map("${OUTBOX_TABLE}")`);
});

describe("the relay's query for unpublished rows", () => {
  it('finds the services with an outbox', () => {
    expect(servicesWithOutbox).toEqual(expect.arrayContaining(['catalog', 'invoicing', 'subscription']));
  });

  it.each(servicesWithOutbox)('in %s, after its migrations, walks the partial index of unpublished rows, however many are stamped', async (app) => {
    const databaseUrl = await createTestDatabase(`outbox_${app}`);
    await applyMigrations({ databaseUrl, migrationsDir: join(APPS, app, 'prisma/migrations') });
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // A history of stamped rows and a short backlog, as a relay that keeps up leaves them.
      await client.query(
        `INSERT INTO ${OUTBOX_TABLE} (id, topic, key, type, payload, headers, published_at)
         SELECT 'evt_' || n, 't', 'k' || (n % 100), 'x', '{}', '{}', CASE WHEN n > 20000 THEN NULL ELSE now() END
           FROM generate_series(1, 20010) AS n`,
      );
      await client.query(`ANALYZE ${OUTBOX_TABLE}`);
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${unpublishedBatchSql(1000)}`);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).toContain('"Index Name":"outbox_events_unpublished_seq_idx"');
      expect(plan).not.toContain('"Node Type":"Sort"');
      // The lock gate is evaluated once, above the scan, not per row.
      expect(plan).toContain('"One-Time Filter"');
      const backlog = Array.from({ length: 10 }, (_, i) => `evt_${20001 + i}`);
      const unpublishedIds = async () => (await client.query<{ id: string }>(unpublishedBatchSql(1000))).rows.map((row) => row.id);
      expect(await unpublishedIds()).toEqual(backlog);

      // While another session holds the relay lock, the same statement reads nothing.
      const holder = new Client({ connectionString: databaseUrl });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [OUTBOX_RELAY_LOCK_KEY]);
        expect(await unpublishedIds()).toEqual([]);
        await holder.query('COMMIT');
        expect(await unpublishedIds()).toEqual(backlog);
      } finally {
        await holder.end();
      }
    } finally {
      await client.end();
    }
  });
});
