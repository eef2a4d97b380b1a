import { type Context, context, propagation, type Span, SpanKind, trace } from '@opentelemetry/api';
import { eventsConsumed } from '@recur/telemetry';
import type { BatchHandler, BusMessage, MessageHandler } from './bus';
import type { Registry } from '@bufbuild/protobuf';
import { decodeInternalEvent, decodePublicEvent, type InternalEvent, type PublicEvent } from './event';

/**
 * The inbox table every consuming service has (`inbox_events`: event_id, consumer,
 * processed_at; primary key (event_id, consumer)). Claiming the id in the same
 * transaction as the handler's change makes redelivery change nothing.
 */
export interface InboxTransaction {
  inboxEvent: { createMany(args: { data: { eventId: string; consumer: string }[]; skipDuplicates: boolean }): PromiseLike<{ count: number }> };
}

/** True when this consumer has not processed the event before (and now owns it). */
export async function claimInboxEvent(tx: InboxTransaction, consumer: string, eventId: string): Promise<boolean> {
  const { count } = await tx.inboxEvent.createMany({ data: [{ eventId, consumer }], skipDuplicates: true });
  return count === 1;
}

/**
 * claimInboxEvent as SQL, for a consumer that writes its whole change in one statement (a CTE):
 * answers the event id when this consumer now owns the event, no row when it processed it
 * before. The arguments are the statement's parameter references (`$1`).
 */
export function claimInboxEventSql(consumerParam: string, eventIdParam: string): string {
  return `INSERT INTO inbox_events (event_id, consumer) VALUES (${eventIdParam}, ${consumerParam}) ON CONFLICT DO NOTHING RETURNING event_id`;
}

/**
 * claimInboxEventSql for a batch: claims every id of the `text[]` parameter at once and
 * answers the ids this consumer now owns (an id claimed before, or twice in the array, once at most).
 */
export function claimInboxEventsSql(consumerParam: string, eventIdsParam: string): string {
  return `INSERT INTO inbox_events (event_id, consumer) SELECT event_id, ${consumerParam} FROM unnest(${eventIdsParam}::text[]) AS claim (event_id) ON CONFLICT DO NOTHING RETURNING event_id`;
}

const tracer = trace.getTracer('@recur/messaging');

/**
 * What a handler did with an event: `duplicate` when its inbox already held the id,
 * `refused` when the event is not one the consumer accepts (it is acknowledged and
 * dropped: a retry could never make it acceptable).
 */
export type EventOutcome = 'processed' | 'duplicate' | 'refused';

export interface EventHandlerOptions {
  /** Told about every message that is dropped unhandled (undecodable, unknown or refused). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Decodes one message for a consumer: a message that does not decode is counted `malformed` and
 * dropped (redelivering it would block its partition forever), a type the consumer does not
 * handle (`decode` answers undefined) is counted `ignored`; both answer undefined.
 */
function decodeCounted<Event>(service: string, decode: (message: BusMessage) => Event | undefined, message: BusMessage, options: EventHandlerOptions): Event | undefined {
  let event: Event | undefined;
  try {
    event = decode(message);
  } catch (error) {
    eventsConsumed.inc({ service, type: message.headers['event-type'] ?? 'unknown', outcome: 'malformed' });
    options.warn?.('event dropped: it does not decode', { topic: message.topic, key: message.key, error: (error as Error).message });
    return undefined;
  }
  if (!event) eventsConsumed.inc({ service, type: message.headers['event-type'] ?? 'unknown', outcome: 'ignored' });
  return event;
}

/**
 * Wraps a consumer's handler: decodes the message with the generated schema, continues
 * the producer's trace in a consumer span, and counts the outcome. A message that does
 * not decode is dropped and counted `malformed`: redelivering it would block its
 * partition forever. A handler that throws gets the message again.
 */
function tracedHandler<Event extends { id: string; type: string }>(
  service: string,
  decode: (message: BusMessage) => Event | undefined,
  handle: (event: Event) => Promise<EventOutcome>,
  options: EventHandlerOptions,
): MessageHandler {
  return async (message: BusMessage) => {
    const decoded = decodeCounted(service, decode, message, options);
    if (!decoded) return;
    const parent = propagation.extract(context.active(), message.headers);
    await tracer.startActiveSpan(
      `${message.topic} process`,
      { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': message.topic, 'messaging.message.id': decoded.id, 'recur.event.type': decoded.type } },
      parent,
      async (span) => {
        try {
          const outcome = await handle(decoded);
          eventsConsumed.inc({ service, type: decoded.type, outcome });
          if (outcome === 'refused') options.warn?.('event refused', { topic: message.topic, event_id: decoded.id, type: decoded.type });
        } catch (error) {
          eventsConsumed.inc({ service, type: decoded.type, outcome: 'failed' });
          span.recordException(error as Error);
          throw error;
        } finally {
          span.end();
        }
      },
    );
  };
}

/** A consumer of public events (recur.events.v1.PublicEvent): webhook-dispatch's event log. */
export function publicEventHandler(service: string, handle: (event: PublicEvent) => Promise<EventOutcome>, options: EventHandlerOptions = {}): MessageHandler {
  return tracedHandler(service, (message) => decodePublicEvent(message.value), handle, options);
}

/** A decoded event and the trace context its producer sent, for the work it causes. */
export interface ReceivedEvent<Event> {
  event: Event;
  /** The producer's span: what the consumer's work for this event continues. */
  traceContext: Context;
}

/** A decoded public event and the trace context its producer sent. */
export type ReceivedPublicEvent = ReceivedEvent<PublicEvent>;

/** A decoded integration event and the trace context its producer sent. */
export type ReceivedInternalEvent = ReceivedEvent<InternalEvent>;

/**
 * Wraps a consumer's batch handler: decodes each message (`decode` answers undefined for a type
 * the consumer does not handle: counted `ignored`, never decoded), opens each event's consumer
 * span, a child of its producer's, while the batch is handled, and counts the outcomes. A message
 * that does not decode is dropped and counted `malformed`, as with tracedHandler.
 */
function tracedBatchHandler<Event extends { id: string; type: string }>(
  service: string,
  decode: (message: BusMessage) => Event | undefined,
  handle: (events: ReceivedEvent<Event>[]) => Promise<EventOutcome[]>,
  options: EventHandlerOptions,
): BatchHandler {
  return async (messages: BusMessage[]) => {
    const received: (ReceivedEvent<Event> & { span: Span; topic: string })[] = [];
    for (const message of messages) {
      const event = decodeCounted(service, decode, message, options);
      if (!event) continue;
      const parent = propagation.extract(context.active(), message.headers);
      const span = tracer.startSpan(
        `${message.topic} process`,
        { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': message.topic, 'messaging.message.id': event.id, 'recur.event.type': event.type, 'messaging.batch.message_count': messages.length } },
        parent,
      );
      received.push({ event, traceContext: trace.setSpan(parent, span), span, topic: message.topic });
    }
    if (received.length === 0) return;
    try {
      const outcomes = await handle(received.map(({ event, traceContext }) => ({ event, traceContext })));
      received.forEach(({ event, topic }, index) => {
        eventsConsumed.inc({ service, type: event.type, outcome: outcomes[index] });
        if (outcomes[index] === 'refused') options.warn?.('event refused', { topic, event_id: event.id, type: event.type });
      });
    } catch (error) {
      for (const { event, span } of received) {
        eventsConsumed.inc({ service, type: event.type, outcome: 'failed' });
        span.recordException(error as Error);
      }
      throw error;
    } finally {
      for (const { span } of received) span.end();
    }
  };
}

/**
 * A consumer of public events that records a batch of them in one transaction (the inbox
 * claim for all, then their effects): `handle` answers one outcome per event, in order, and
 * throws to have the whole batch redelivered.
 */
export function publicEventBatchHandler(
  service: string,
  handle: (events: ReceivedPublicEvent[]) => Promise<EventOutcome[]>,
  options: EventHandlerOptions = {},
): BatchHandler {
  return tracedBatchHandler(service, (message) => decodePublicEvent(message.value), handle, options);
}

/**
 * internalEventHandler for a batch (subscribeBatch): the events of `handles`' types, decoded, in
 * their partition's order; others are acknowledged undecoded. `handle` answers one outcome per
 * event, in order, and throws to have the whole batch redelivered.
 */
export function internalEventBatchHandler(
  service: string,
  handles: Registry,
  handle: (events: ReceivedInternalEvent[]) => Promise<EventOutcome[]>,
  options: EventHandlerOptions = {},
): BatchHandler {
  return tracedBatchHandler(service, (message) => decodeHandledInternalEvent(message, handles), handle, options);
}

/**
 * A batch handler that handles the batch's events one after the other, each in its producer's
 * trace and its own transaction (`handle`, with its own inbox claim): for a consumer that reacts
 * to few of a busy topic's events, so it reads the topic a batch at a time (kafkajs's per-message
 * work, not its own, was its cost) without changing how it handles an event. A batch cut short
 * is redelivered whole; the events it had handled are duplicates then.
 */
export function eachInTurn<Event>(handle: (event: Event) => Promise<EventOutcome>): (events: ReceivedEvent<Event>[]) => Promise<EventOutcome[]> {
  return async (events) => {
    const outcomes: EventOutcome[] = [];
    for (const { event, traceContext } of events) outcomes.push(await context.with(traceContext, () => handle(event)));
    return outcomes;
  };
}

/** The message's integration event when `handles` knows its type (read from the header, before any decoding). */
const decodeHandledInternalEvent = (message: BusMessage, handles: Registry): InternalEvent | undefined =>
  handles.getMessage(message.headers['event-type'] ?? '') ? decodeInternalEvent(message.value, handles) : undefined;

/**
 * A consumer of integration events (recur.events.v1.InternalEvent). `handles` holds the
 * payload types it reacts to; others are acknowledged undecoded (counted `ignored`), so
 * a producer may publish a new type before every consumer knows its schema.
 */
export function internalEventHandler(
  service: string,
  handles: Registry,
  handle: (event: InternalEvent) => Promise<EventOutcome>,
  options: EventHandlerOptions = {},
): MessageHandler {
  return tracedHandler(
    service,
    (message) => decodeHandledInternalEvent(message, handles),
    handle,
    options,
  );
}
