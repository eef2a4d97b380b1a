import { injectTraceHeaders } from '@recur/telemetry';
import { defaultTopicMap, encodeEvent, isInternalEvent, type OutboxEvent } from './event';

/**
 * The outbox table every service's database has (`outbox_events`, owned by this library:
 * libs/messaging/migrations):
 *   seq bigserial, id text unique (the event id), topic, key, type, payload jsonb,
 *   headers jsonb, created_at, published_at (null until relayed), producer and kind (what the
 *   relay resolves the topic from when it publishes; null on rows of releases before it).
 */
export const OUTBOX_TABLE = 'outbox_events';
export const OUTBOX_CHANNEL = 'recur_outbox';

export interface OutboxRow {
  id: string;
  /**
   * The topic of today's map when written: what a relay of the release before topic resolution
   * publishes to during a rollout. This release's relay resolves the topic from producer and kind.
   */
  topic: string;
  producer: string;
  kind: 'internal' | 'public';
  key: string;
  type: string;
  payload: object;
  headers: Record<string, string>;
}

/** A Prisma transaction client: it can run nothing after its commit, so the wake-up goes inside. */
export interface PrismaOutboxTransaction {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A transaction that can NOTIFY after it commits (@recur/persistence's PgTransaction). */
export interface NotifyingOutboxTransaction {
  execute(sql: string, values: unknown[]): Promise<void>;
  notifyAfterCommit(channel: string): void;
}

export type OutboxTransaction = PrismaOutboxTransaction | NotifyingOutboxTransaction;

/** The rows, from a JSON array of OutboxRow (parameter `jsonParam`), kept in its order for `seq`. */
const insertSql = (jsonParam: string) => `
    INSERT INTO ${OUTBOX_TABLE} (id, topic, producer, kind, key, type, payload, headers)
    SELECT id, topic, producer, kind, key, type, payload, headers
      FROM ROWS FROM (jsonb_to_recordset(${jsonParam}::jsonb) AS (id text, topic text, producer text, kind text, key text, type text, payload jsonb, headers jsonb))
           WITH ORDINALITY AS event (id, topic, producer, kind, key, type, payload, headers, position)
     ORDER BY position`;

/**
 * The rows and the relay's wake-up in one statement: one round trip inside the caller's
 * transaction instead of two, and no ORM query planning (Prisma's createMany cost more CPU than
 * the rest of the insert, tools/bench). It is the statement after its `WITH`, so the change's own
 * data-modifying `WITH` entry can come first.
 */
const insertAndNotifySql = (jsonParam: string) => `
  inserted AS (${insertSql(jsonParam)} RETURNING seq)
  SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM (SELECT count(*) FROM inserted) AS written`;

/** The statement of the change an event describes, to run in the same statement as its outbox rows. */
export interface OutboxChange {
  /** An INSERT, UPDATE or DELETE with parameters $1…$n. */
  sql: string;
  values: unknown[];
}

/**
 * Records events in the same transaction as the change they describe, with the active
 * trace context, and wakes the relay at commit: after the COMMIT where the transaction can
 * (a NOTIFY inside it serialises every notifying commit, docs/performance.md), else inside it
 * (delivered only if it commits). No event exists without its change, nor a change without it.
 * Given the `change` itself, it runs it and writes the rows in one statement (a data-modifying
 * `WITH`): one round trip for both.
 * A row records its producer and the kind of its envelope (an InternalEvent can only go to an
 * internal topic, a PublicEvent only to a public one); the relay picks the topic from those when it
 * publishes. The payload is the wire JSON.
 */
export async function appendToOutbox(tx: OutboxTransaction, producer: string, events: OutboxEvent[], change?: OutboxChange): Promise<void> {
  if (events.length === 0) {
    if (change) await ('notifyAfterCommit' in tx ? tx.execute(change.sql, change.values) : tx.$executeRawUnsafe(change.sql, ...change.values));
    return;
  }
  const headers = injectTraceHeaders();
  const rows: OutboxRow[] = events.map((event) => {
    const kind = isInternalEvent(event) ? 'internal' : 'public';
    return {
      id: event.id,
      topic: defaultTopicMap({ producer, kind, type: event.type }),
      producer,
      kind,
      key: event.aggregateId,
      type: event.type,
      payload: encodeEvent(event),
      headers: { ...headers, 'event-id': event.id, 'event-type': event.type },
    };
  });
  const values = [...(change?.values ?? []), JSON.stringify(rows)];
  const jsonParam = `$${values.length}`;
  const withChange = change ? `WITH change AS (${change.sql})` : '';
  if ('notifyAfterCommit' in tx) {
    await tx.execute(`${withChange} ${insertSql(jsonParam)}`, values);
    tx.notifyAfterCommit(OUTBOX_CHANNEL);
  } else {
    await tx.$executeRawUnsafe(`${withChange ? `${withChange},` : 'WITH'} ${insertAndNotifySql(jsonParam)}`, ...values);
  }
}
