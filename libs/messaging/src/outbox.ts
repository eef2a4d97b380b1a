import { injectTraceHeaders } from '@recur/telemetry';
import { encodeEvent, internalEventsTopic, isInternalEvent, type OutboxEvent, publicEventsTopic } from './event';

/**
 * The outbox table every producing service has (`outbox_events`, in its own Prisma schema):
 *   seq bigserial, id text primary key (the event id), topic, key, type, payload jsonb,
 *   headers jsonb, created_at, published_at (null until relayed).
 */
export const OUTBOX_TABLE = 'outbox_events';
export const OUTBOX_CHANNEL = 'recur_outbox';

export interface OutboxRow {
  id: string;
  topic: string;
  key: string;
  type: string;
  payload: object;
  headers: Record<string, string>;
}

/** What appendToOutbox needs of a Prisma transaction client (or any other). */
export interface OutboxTransaction {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/**
 * The rows (a JSON array of OutboxRow, kept in its order for `seq`) and the relay's wake-up in one
 * statement: one round trip inside the caller's transaction instead of two, and no ORM query
 * planning (Prisma's createMany cost more CPU than the rest of the insert, tools/bench).
 */
const INSERT_AND_NOTIFY = `
  WITH inserted AS (
    INSERT INTO ${OUTBOX_TABLE} (id, topic, key, type, payload, headers)
    SELECT id, topic, key, type, payload, headers
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (id text, topic text, key text, type text, payload jsonb, headers jsonb))
           WITH ORDINALITY AS event (id, topic, key, type, payload, headers, position)
     ORDER BY position
    RETURNING seq)
  SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM (SELECT count(*) FROM inserted) AS written`;

/**
 * Records events in the same transaction as the change they describe, with the active
 * trace context, and wakes the relay at commit (NOTIFY is delivered only if the
 * transaction commits). No event exists without its change, nor a change without it.
 * The topic follows from the envelope: an InternalEvent can only go to the producer's
 * internal topic, a PublicEvent only to its public one. The payload is the wire JSON.
 */
export async function appendToOutbox(tx: OutboxTransaction, producer: string, events: OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const headers = injectTraceHeaders();
  const rows: OutboxRow[] = events.map((event) => ({
    id: event.id,
    topic: isInternalEvent(event) ? internalEventsTopic(producer) : publicEventsTopic(producer),
    key: event.aggregateId,
    type: event.type,
    payload: encodeEvent(event),
    headers: { ...headers, 'event-id': event.id, 'event-type': event.type },
  }));
  await tx.$executeRawUnsafe(INSERT_AND_NOTIFY, JSON.stringify(rows));
}
