import type { PoolClient } from 'pg';
import type { InboxTransaction } from '../src/inbox';
import type { PrismaOutboxTransaction } from '../src/outbox';

/** The outbox and inbox tables as every service's Prisma schema declares them, and a table of "changes". */
export const MESSAGING_TABLES = `
  CREATE TABLE outbox_events (
    seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, topic text NOT NULL, key text NOT NULL, type text NOT NULL,
    payload jsonb NOT NULL, headers jsonb NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    published_at timestamptz(3));
  CREATE INDEX outbox_events_unpublished_seq_idx ON outbox_events (seq) WHERE published_at IS NULL;
  CREATE TABLE inbox_events (
    event_id text NOT NULL, consumer text NOT NULL, processed_at timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (event_id, consumer));
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
