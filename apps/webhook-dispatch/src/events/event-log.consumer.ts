import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, type Clock, newId } from '@recur/kernel';
import { isSubscribableEventType } from '@recur/vocabulary';
import { context } from '@opentelemetry/api';
import { claimInboxEventsSql, consumerGroup, type EventOutcome, publicEventBatchHandler, publicEventsTopic, type ReceivedPublicEvent } from '@recur/messaging';
import { CoalescingNotifier } from '@recur/persistence';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { injectTraceHeaders } from '@recur/telemetry';
import { DELIVERIES_CHANNEL } from '../deliveries/deliveries.service';
import { PrismaService } from '../infrastructure/prisma.service';

/** The services whose public events webhook-dispatch records and delivers (their `.public` topics only). */
export const PRODUCERS = ['subscription', 'invoicing', 'payments', 'usage-metering'];
/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'webhook-dispatch.event-log';

/** The enabled endpoints of the tenants given (account and mode, pairwise), with the event types each subscribes to. */
const ENABLED_ENDPOINTS = `
  SELECT id, account_id, livemode, events FROM webhook_endpoints
  WHERE (account_id, livemode) IN (SELECT * FROM unnest($1::text[], $2::boolean[]))
    AND status = 'enabled' AND deleted_at IS NULL`;

/**
 * Claims the events in the inbox, records those it now owns and queues one delivery per
 * endpoint given, in one statement (one implicit transaction): an event the inbox already
 * held records and queues nothing.
 */
const RECORD_AND_QUEUE = `
  WITH claimed AS (${claimInboxEventsSql('$1', '$2')}),
  recorded AS (
    INSERT INTO events (id, account_id, livemode, type, created, data, object_id)
    SELECT event.id, event.account_id, event.livemode, event.type, event.created, event.data, event.object_id
    FROM unnest($2::text[], $3::text[], $4::boolean[], $5::text[], $6::bigint[], $7::jsonb[], $13::text[]) AS event (id, account_id, livemode, type, created, data, object_id)
    JOIN claimed ON claimed.event_id = event.id
    RETURNING id, account_id, livemode, type),
  queued AS (
    INSERT INTO deliveries (id, account_id, livemode, endpoint_id, event_id, event_type, status, next_attempt_at, trace_headers, created_at, updated_at)
    SELECT queue.id, recorded.account_id, recorded.livemode, queue.endpoint_id, recorded.id, recorded.type, 'pending', $8, queue.trace_headers, $8, $8
    FROM unnest($9::text[], $10::text[], $11::text[], $12::jsonb[]) AS queue (id, event_id, endpoint_id, trace_headers)
    JOIN recorded ON recorded.id = queue.event_id
    ON CONFLICT DO NOTHING
    RETURNING id)
  SELECT array(SELECT event_id FROM claimed) AS claimed, (SELECT count(*) FROM queued)::int AS queued`;

/**
 * Records every public event in the event log and queues its deliveries, exactly once per
 * event id: the inbox claim, the insert and the deliveries commit together, so a
 * redelivered event changes nothing. It reads only the producers' public topics, and
 * still refuses any event whose type is not one of the specification's subscribable
 * types (`webhook.test` included: webhook-dispatch makes those itself), so nothing
 * internal can reach the event log or an endpoint.
 *
 * Every event passes here, so it takes a batch of a partition's events at a time (kafkajs
 * `eachBatch`, offsets committed after) on the plain `pg` pool in two round trips for the whole
 * batch (the endpoints, then one statement that writes everything); the dispatcher's wake-up
 * follows the commit (docs/performance.md).
 */
@Injectable()
export class EventLogConsumer implements OnApplicationBootstrap {
  private readonly notifier: CoalescingNotifier;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
    @Inject(CLOCK) private readonly now: Clock,
  ) {
    this.notifier = new CoalescingNotifier(prisma.pool, (error) => runtime.logger.warn('deliveries wake-up failed; the dispatcher will poll', { error: error.message }));
  }

  async onApplicationBootstrap(): Promise<void> {
    const topics = PRODUCERS.map((producer) => publicEventsTopic(producer));
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribeBatch(consumerGroup(CONSUMER), topics, publicEventBatchHandler(this.runtime.name, (events) => this.record(events), { warn }));
  }

  /** One outcome per event, in order; a repeat of an id within the batch is a duplicate. */
  async record(received: ReceivedPublicEvent[]): Promise<EventOutcome[]> {
    const seen = new Set<string>();
    const outcomes = received.map(({ event }): EventOutcome | undefined => {
      if (!isSubscribableEventType(event.type) || !event.accountId) return 'refused';
      if (seen.has(event.id)) return 'duplicate';
      seen.add(event.id);
      return undefined;
    });
    const accepted = received.filter((_, index) => outcomes[index] === undefined);
    if (accepted.length === 0) return outcomes as EventOutcome[];
    const { pool } = this.prisma;
    const tenants = [...new Map(accepted.map(({ event }) => [`${event.accountId}\u0000${event.livemode}`, event])).values()];
    const endpoints = (await pool.query<{ id: string; account_id: string; livemode: boolean; events: string[] }>(ENABLED_ENDPOINTS, [
      tenants.map((event) => event.accountId), tenants.map((event) => event.livemode),
    ])).rows;
    const queue = accepted.flatMap(({ event, traceContext }) => {
      // Each attempt of a delivery continues the trace of this event's consumer span.
      const traceHeaders = context.with(traceContext, injectTraceHeaders);
      return endpoints
        .filter((endpoint) => endpoint.account_id === event.accountId && endpoint.livemode === event.livemode && endpoint.events.includes(event.type))
        .map((endpoint) => ({ id: newId('whd'), eventId: event.id, endpointId: endpoint.id, traceHeaders: Object.keys(traceHeaders).length > 0 ? JSON.stringify(traceHeaders) : null }));
    });
    const [result] = (await pool.query<{ claimed: string[]; queued: number }>(RECORD_AND_QUEUE, [
      CONSUMER,
      accepted.map(({ event }) => event.id), accepted.map(({ event }) => event.accountId), accepted.map(({ event }) => event.livemode),
      accepted.map(({ event }) => event.type), accepted.map(({ event }) => String(event.created)), accepted.map(({ event }) => JSON.stringify(event.data ?? {})),
      this.now(),
      queue.map((delivery) => delivery.id), queue.map((delivery) => delivery.eventId), queue.map((delivery) => delivery.endpointId), queue.map((delivery) => delivery.traceHeaders),
      accepted.map(({ event }) => event.aggregateId || null),
    ])).rows;
    if (result.queued > 0) this.notifier.notify(DELIVERIES_CHANNEL);
    const claimed = new Set(result.claimed);
    let acceptedIndex = 0;
    return outcomes.map((outcome) => outcome ?? (claimed.has(accepted[acceptedIndex++].event.id) ? 'processed' : 'duplicate'));
  }
}
