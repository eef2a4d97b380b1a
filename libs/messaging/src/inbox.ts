import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { eventsConsumed } from '@recur/telemetry';
import type { BusMessage, MessageHandler } from './bus';
import type { IntegrationEvent } from './event';

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

const tracer = trace.getTracer('@recur/messaging');

/**
 * Wraps a consumer's event handler: parses the event, continues the producer's trace
 * in a consumer span, and counts the outcome. The handler returns false for a duplicate.
 */
export function eventHandler(service: string, handle: (event: IntegrationEvent) => Promise<boolean>): MessageHandler {
  return async (message: BusMessage) => {
    const event = JSON.parse(message.value) as IntegrationEvent;
    const parent = propagation.extract(context.active(), message.headers);
    await tracer.startActiveSpan(
      `${message.topic} process`,
      { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': message.topic, 'messaging.message.id': event.id, 'recur.event.type': event.type } },
      parent,
      async (span) => {
        try {
          const fresh = await handle(event);
          eventsConsumed.inc({ service, type: event.type, outcome: fresh ? 'processed' : 'duplicate' });
        } catch (error) {
          eventsConsumed.inc({ service, type: event.type, outcome: 'failed' });
          span.recordException(error as Error);
          throw error;
        } finally {
          span.end();
        }
      },
    );
  };
}
