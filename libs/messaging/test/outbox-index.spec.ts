import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyMigrations, PERSISTENCE_MIGRATIONS } from '@recur/persistence';
import { commitAndOutliveRunningTransactions, createTestDatabase } from '@recur/testing';
import { Client } from 'pg';
import { claimBatchSql, MESSAGING_MIGRATIONS, OUTBOX_RELAY_LOCK_KEY, OUTBOX_TABLE, unpublishedBatchSql } from '../src';

jest.setTimeout(60_000);

const APPS = join(__dirname, '../../../apps');
/** Every service whose schema has an outbox, so a new one is checked without editing this list. */
const servicesWithOutbox = readdirSync(APPS).filter((app) => {
  const schema = join(APPS, app, 'prisma/schema.prisma');
  return existsSync(schema) && readFileSync(schema, 'utf8').includes(`@@map("${OUTBOX_TABLE}")`);
});

/** A new database with `app`'s migrations and the platform's applied, as the service applies them, and a client connected to it. */
async function migratedDatabase(app: string, label: string): Promise<{ client: Client; databaseUrl: string }> {
  const databaseUrl = await createTestDatabase(label);
  await applyMigrations({ databaseUrl, migrationsDir: join(APPS, app, 'prisma/migrations'), libraries: [MESSAGING_MIGRATIONS, PERSISTENCE_MIGRATIONS] });
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  return { client, databaseUrl };
}

describe("the relay's query for unpublished rows", () => {
  it('finds the services with an outbox', () => {
    expect(servicesWithOutbox).toEqual(expect.arrayContaining(['catalog', 'invoicing', 'subscription']));
  });

  it.each(servicesWithOutbox)('in %s, after its migrations, walks the partial index of unpublished rows, however many are stamped', async (app) => {
    const { client, databaseUrl } = await migratedDatabase(app, `outbox_${app}`);
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

  it.each(servicesWithOutbox)('in %s, skips the index entries its stamps left dead instead of reading them on every claim', async (app) => {
    const { client } = await migratedDatabase(app, `outbox_dead_${app}`);
    try {
      // As a relay that keeps up leaves the table between two vacuums: rows inserted unpublished,
      // then stamped (each stamp a dead entry in the partial index), and a backlog of 10.
      await client.query(`ALTER TABLE ${OUTBOX_TABLE} SET (autovacuum_enabled = false)`);
      await client.query(
        `INSERT INTO ${OUTBOX_TABLE} (id, topic, key, type, payload, headers)
         SELECT 'evt_' || n, 't', 'k' || (n % 100), 'x', '{}', '{}' FROM generate_series(1, 5010) AS n`,
      );
      // Statistics taken under load, with a backlog of 310 (as autoanalyze's are): the planner then
      // expects a few hundred unpublished rows, fewer than the claim's limit.
      await client.query(`UPDATE ${OUTBOX_TABLE} SET published_at = now() WHERE seq <= (SELECT min(seq) + 4699 FROM ${OUTBOX_TABLE})`);
      await client.query(`ANALYZE ${OUTBOX_TABLE}`);
      await commitAndOutliveRunningTransactions(client, `UPDATE ${OUTBOX_TABLE} SET published_at = now() WHERE published_at IS NULL AND seq <= (SELECT min(seq) + 4999 FROM ${OUTBOX_TABLE})`);
      /** Index entries the relay's claims have read so far (this session's statistics, flushed first). */
      const entriesRead = async () => {
        await client.query('SELECT pg_stat_force_next_flush()');
        const { rows } = await client.query<{ read: string }>("SELECT idx_tup_read AS read FROM pg_stat_user_indexes WHERE indexrelname = 'outbox_events_unpublished_seq_idx'");
        return Number(rows[0].read);
      };
      /** One claim as the relay runs it, rolled back: the index entries it read, and the rows. */
      const claim = async () => {
        const before = await entriesRead();
        const [, , batch] = (await client.query(claimBatchSql(1000))) as unknown as [unknown, unknown, { rows: { id: string }[] }];
        const { rows: plan } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${unpublishedBatchSql(1000)}`);
        await client.query('ROLLBACK');
        return { entries: (await entriesRead()) - before, rows: batch.rows.length, plan: JSON.stringify(plan[0]['QUERY PLAN']) };
      };
      const first = await claim();
      expect(first.plan).toContain('"Node Type":"Index Scan"');
      expect(first.plan).not.toContain('Bitmap');
      // The first claim passes the 5 000 dead entries once, marking them; the next skips them.
      const second = await claim();
      expect({ first: { rows: first.rows, passedTheDead: first.entries >= 5_000 }, second }).toEqual({
        first: { rows: 10, passedTheDead: true },
        second: { entries: 10, rows: 10, plan: first.plan },
      });
    } finally {
      await client.end();
    }
  });
});
