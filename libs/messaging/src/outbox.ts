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

/**
 * What appendToOutbox needs of a Prisma transaction client; every service's generated
 * client satisfies it because each schema declares the same OutboxEvent model.
 */
export interface OutboxTransaction {
  outboxEvent: { createMany(args: { data: OutboxRow[] }): PromiseLike<unknown> };
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

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
  await tx.outboxEvent.createMany({
    data: events.map((event) => ({
      id: event.id,
      topic: isInternalEvent(event) ? internalEventsTopic(producer) : publicEventsTopic(producer),
      key: event.aggregateId,
      type: event.type,
      payload: encodeEvent(event),
      headers: { ...headers, 'event-id': event.id, 'event-type': event.type },
    })),
  });
  await tx.$executeRawUnsafe(`SELECT pg_notify('${OUTBOX_CHANNEL}', '')`);
}
