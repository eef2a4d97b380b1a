import { applyMigrations } from '@recur/persistence';
import { queryDatabase } from '@recur/testing';
import type { PoolClient } from 'pg';
import type { InboxTransaction } from '../src/inbox';
import { MESSAGING_MIGRATIONS } from '../src/migrations';
import type { PrismaOutboxTransaction } from '../src/outbox';

/**
 * The outbox and inbox tables from the library's own migrations (what every service's database
 * gets), and tables of "changes" for the tests.
 */
export async function createMessagingTables(databaseUrl: string): Promise<void> {
  await applyMigrations({ databaseUrl, migrationsDir: MESSAGING_MIGRATIONS.migrationsDir, libraries: [] });
  await queryDatabase(databaseUrl, TEST_TABLES);
}

const TEST_TABLES = `
  CREATE TABLE widgets (id text PRIMARY KEY);
  CREATE TABLE widget_events_seen (event_id text PRIMARY KEY);
  CREATE TABLE publish_log (event_id text NOT NULL, publisher text NOT NULL);`;

/**
 * A transaction on a pg client in the shape appendToOutbox and claimInboxEvent take: the part
 * of a Prisma transaction client they use, answered with the same SQL semantics (createMany's
 * skipDuplicates is ON CONFLICT DO NOTHING, and count is the rows inserted).
 */
export function pgTransaction(client: PoolClient): PrismaOutboxTransaction & InboxTransaction {
  return {
    inboxEvent: {
      async createMany({ data, skipDuplicates }) {
        let count = 0;
        for (const row of data) {
          const result = await client.query(`INSERT INTO inbox_events (event_id, consumer) VALUES ($1, $2)${skipDuplicates ? ' ON CONFLICT DO NOTHING' : ''}`, [row.eventId, row.consumer]);
          count += result.rowCount ?? 0;
        }
        return { count };
      },
    },
    $executeRawUnsafe: async (query: string, ...values: unknown[]) => (await client.query(query, values)).rowCount ?? 0,
  };
}
