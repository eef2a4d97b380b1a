import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { CLOCK, type Clock } from '@recur/kernel';
import { claimDueRows } from '@recur/persistence';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { markSpanFailed, withClientSpan } from '@recur/telemetry';
import { deliveryBody, signatureHeaders } from '@recur/webhooks';
import { PrismaService } from '../infrastructure/prisma.service';
import { WEBHOOK_CONFIG } from '../tokens';
import type { WebhookConfig } from '../webhook-config';
import { DELIVERIES_CHANNEL } from './deliveries.service';
import { AttemptsRepository } from './attempts.repository';
import { sendDelivery } from './http-sender';
import { isSuccessStatus } from './schedule';

/** A claimed delivery with what its attempt needs: the endpoint and the event (absent if gone). */
interface ClaimedDelivery {
  id: string;
  attempt_count: number;
  manual: boolean;
  url: string | null;
  secret: string | null;
  endpoint_status: string | null;
  endpoint_deleted_at: Date | null;
  event_id: string;
  event_type: string | null;
  /** Unix seconds (BIGINT, which `pg` reads as text). */
  event_created: string | null;
  event_livemode: boolean | null;
  event_data: unknown;
  /** W3C headers of the trace that queued the delivery; null for rows queued untraced. */
  trace_headers: Record<string, string> | null;
  /** Until when this claim holds the delivery. */
  lease_until: Date;
}

/**
 * How long a claim holds a delivery: claimed ahead, it may wait up to one receiver timeout for
 * a slot (every slot frees within one), then its own post takes up to another, plus a margin
 * for recording. A worker killed holding it leaves it to be claimed again after this.
 */
const leaseMs = (timeoutMs: number) => 2 * timeoutMs + 15_000;
const IDLE_POLL_MS = 1_000;

/** Pending deliveries are due-time rows: due at `next_attempt_at`, leased until `lease_until`. */
const DELIVERY_ROWS: DueRowsTable = { table: 'deliveries', dueAt: 'next_attempt_at', leaseUntil: 'lease_until', pending: "status = 'pending'" };

/** What a claim of due deliveries answers: each with its endpoint and event, in the claim's round trip. */
const CLAIMED_DELIVERIES = `
  SELECT c.id, c.attempt_count, c.manual, c.event_id, c.trace_headers, c.lease_until,
         e.url, e.secret, e.status AS endpoint_status, e.deleted_at AS endpoint_deleted_at,
         ev.type AS event_type, ev.created AS event_created, ev.livemode AS event_livemode, ev.data AS event_data
  FROM claimed c
  LEFT JOIN webhook_endpoints e ON e.id = c.endpoint_id
  LEFT JOIN events ev ON ev.id = c.event_id`;

/**
 * Sends due deliveries. The schedule lives in the database (`next_attempt_at`), so a
 * restart resumes it where it stood. A JobWorker claims due rows with a lease
 * (FOR UPDATE SKIP LOCKED, so replicas share the work); an attempt whose worker died
 * is taken up again when its lease lapses. Each attempt is recorded with its outcome.
 *
 * Throughput (docs/performance.md): the worker claims up to `concurrency` deliveries ahead of
 * its free slots (one statement for many), so a slot that frees starts the next post at once;
 * outcomes are written in groups by the AttemptsRepository while the slot posts the next one.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<ClaimedDelivery>;
  private readonly attempts: AttemptsRepository;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
    @Inject(CLOCK) private readonly now: Clock,
  ) {
    this.attempts = new AttemptsRepository(prisma.pool, now, 2 * config.concurrency, (error, attempts) =>
      runtime.logger.warn(`${attempts} delivery outcomes not recorded; those deliveries are attempted again once their leases lapse`, { error: error.message }),
    );
    const claimDueDeliveries = claimDueRows<ClaimedDelivery>(prisma.pool, DELIVERY_ROWS, CLAIMED_DELIVERIES);
    this.worker = new JobWorker<ClaimedDelivery>({
      name: 'webhook deliveries',
      clock: now,
      concurrency: config.concurrency,
      prefetch: config.concurrency,
      // A delivery that waited for a slot is posted only if its lease outlasts the receiver's timeout.
      stillLeased: (delivery, at) => delivery.lease_until.getTime() - at.getTime() >= config.timeoutMs,
      wakeUp: { databaseUrl: runtime.config.databaseUrl, channel: DELIVERIES_CHANNEL },
      pollMs: IDLE_POLL_MS,
      // Claims and records, one statement for many deliveries: on Prisma's `pg` pool, without the ORM.
      claim: (limit, at) => claimDueDeliveries(limit, at, leaseMs(config.timeoutMs)),
      run: (delivery) => this.attempt(delivery),
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(DELIVERY_ROWS)))[0]?.next_due_at ?? null,
      log: (message, fields) => runtime.logger.warn(message, fields),
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  /** Attempts in flight finish (bounded by the receiver timeout) and their outcomes are written. */
  async onModuleDestroy(): Promise<void> {
    await this.worker.stop();
    await this.attempts.drained();
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    try {
      if (!claimed.url || !claimed.secret || claimed.endpoint_deleted_at || claimed.endpoint_status !== 'enabled' || !claimed.event_type) {
        await this.prisma.delivery.updateMany({ where: { id: claimed.id, status: 'pending' }, data: { status: 'failed', nextAttemptAt: null, leaseUntil: null, updatedAt: this.now() } });
        return;
      }
      const body = deliveryBody({ id: claimed.event_id, type: claimed.event_type, created: Number(claimed.event_created), livemode: claimed.event_livemode, data: claimed.event_data });
      const attemptedAt = this.now();
      const { url, secret } = claimed;
      const attributes = { 'recur.delivery.id': claimed.id, 'recur.delivery.attempt': claimed.attempt_count + 1, 'recur.event.id': claimed.event_id, 'recur.event.type': claimed.event_type };
      // The attempt continues the trace that queued the delivery; the receiver gets its traceparent.
      const result = await withClientSpan('webhook deliver', claimed.trace_headers, attributes, async (traceHeaders, span) => {
        const sent = await sendDelivery(url, body, { ...signatureHeaders(secret, body), ...traceHeaders }, this.config.timeoutMs, this.config.allowPrivateUrls);
        if (sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
        if (sent.statusCode === null || !isSuccessStatus(sent.statusCode)) markSpanFailed(span, sent.error ?? `answered ${sent.statusCode}`);
        return sent;
      });
      await this.attempts.record({ deliveryId: claimed.id, number: claimed.attempt_count + 1, manual: claimed.manual, attemptedAt, result });
    } catch (error) {
      // The lease lapses and another pass retries the attempt.
      this.runtime.logger.warn(`delivery ${claimed.id} attempt failed to run: ${(error as Error).message}`);
    }
  }
}
