import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { CLOCK, type Clock, newId } from '@recur/kernel';
import { isSubscribableEventType } from '@recur/vocabulary';
import { claimInboxEventSql, consumerGroup, type EventOutcome, type PublicEvent, publicEventHandler, publicEventsTopic } from '@recur/messaging';
import { CoalescingNotifier } from '@recur/persistence';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { injectTraceHeaders } from '@recur/telemetry';
import { DELIVERIES_CHANNEL } from '../deliveries/deliveries.service';
import { PrismaService } from '../infrastructure/prisma.service';

/** The services whose public events webhook-dispatch records and delivers (their `.public` topics only). */
export const PRODUCERS = ['subscription', 'invoicing', 'payments', 'usage-metering'];
/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'webhook-dispatch.event-log';

/** The enabled endpoints of a tenant that subscribe to an event type. */
const SUBSCRIBED_ENDPOINTS = `
  SELECT id FROM webhook_endpoints
  WHERE account_id = $1 AND livemode = $2 AND status = 'enabled' AND deleted_at IS NULL AND $3 = ANY(events)`;

/**
 * Claims the event in the inbox, records it and queues one delivery per endpoint given, in one
 * statement (one implicit transaction): nothing of it happens if the inbox already held the id.
 */
const RECORD_AND_QUEUE = `
  WITH claimed AS (${claimInboxEventSql('$2', '$1')}),
  recorded AS (
    INSERT INTO events (id, account_id, livemode, type, created, data)
    SELECT event_id, $3, $4, $5, $6, $7 FROM claimed
    RETURNING id),
  queued AS (
    INSERT INTO deliveries (id, account_id, livemode, endpoint_id, event_id, event_type, status, next_attempt_at, trace_headers, created_at, updated_at)
    SELECT queue.id, $3, $4, queue.endpoint_id, recorded.id, $5, 'pending', $8, $9, $8, $8
    FROM recorded CROSS JOIN unnest($10::text[], $11::text[]) AS queue (id, endpoint_id)
    ON CONFLICT DO NOTHING
    RETURNING id)
  SELECT (SELECT count(*) FROM claimed)::int AS claimed, (SELECT count(*) FROM queued)::int AS queued`;

/**
 * Records every public event in the event log and queues its deliveries, exactly once per
 * event id: the inbox claim, the insert and the deliveries commit together, so a
 * redelivered event changes nothing. It reads only the producers' public topics, and
 * still refuses any event whose type is not one of the specification's subscribable
 * types (`webhook.test` included: webhook-dispatch makes those itself), so nothing
 * internal can reach the event log or an endpoint.
 *
 * Every event passes here, so it runs on the plain `pg` pool in two round trips (the endpoints,
 * then one statement that writes everything) rather than a Prisma interactive transaction of
 * seven; the dispatcher's wake-up follows the commit (README, Performance).
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
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), topics, publicEventHandler(this.runtime.name, (event) => this.record(event), { warn }));
  }

  async record(event: PublicEvent): Promise<EventOutcome> {
    if (!isSubscribableEventType(event.type) || !event.accountId) return 'refused';
    const { pool } = this.prisma;
    const endpoints = (await pool.query<{ id: string }>(SUBSCRIBED_ENDPOINTS, [event.accountId, event.livemode, event.type])).rows;
    // Each attempt of a delivery continues the trace of this consumer's span.
    const traceHeaders = injectTraceHeaders();
    const [outcome] = (await pool.query<{ claimed: number; queued: number }>(RECORD_AND_QUEUE, [
      event.id, CONSUMER, event.accountId, event.livemode, event.type, String(event.created), JSON.stringify(event.data ?? {}),
      this.now(), Object.keys(traceHeaders).length > 0 ? JSON.stringify(traceHeaders) : null,
      endpoints.map(() => newId('whd')), endpoints.map((endpoint) => endpoint.id),
    ])).rows;
    if (outcome.claimed === 0) return 'duplicate';
    if (outcome.queued > 0) this.notifier.notify(DELIVERIES_CHANNEL);
    return 'processed';
  }
}
