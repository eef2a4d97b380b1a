import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { newId } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { signatureHeaders } from '@recur/webhooks';
import { Client } from 'pg';
import { PrismaService } from '../infrastructure/prisma.service';
import { WEBHOOK_CONFIG } from '../tokens';
import type { WebhookConfig } from '../webhook-config';
import { DELIVERIES_CHANNEL } from './deliveries.service';
import { sendDelivery, type SendResult } from './http-sender';
import { isSuccessStatus, nextStep } from './schedule';

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
  event_created: bigint | null;
  event_livemode: boolean | null;
  event_data: unknown;
}

/** How long past the receiver timeout a claimed delivery stays leased to its worker. */
const LEASE_MARGIN_MS = 15_000;
const IDLE_POLL_MS = 1_000;

/**
 * Sends due deliveries. The schedule lives in the database (`next_attempt_at`), so a
 * restart resumes it where it stood. A worker claims due rows with a lease
 * (FOR UPDATE SKIP LOCKED, so replicas share the work); an attempt whose worker died
 * is taken up again when its lease lapses. Each attempt is recorded with its outcome.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** A wake-up that came while the loop was busy; the next wait is skipped. */
  private notified = false;
  private listener?: Client;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly prisma: PrismaService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.running = true;
    await this.listen().catch((error: Error) => this.runtime.logger.warn(`delivery wake-ups unavailable, polling: ${error.message}`));
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    // Attempts in flight finish (bounded by the receiver timeout) so their outcome is recorded.
    await Promise.allSettled([...this.inFlight]);
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const listener = new Client({ connectionString: this.runtime.config.databaseUrl });
    listener.on('notification', () => this.poke());
    listener.on('error', () => (this.listener = undefined));
    await listener.connect();
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    this.listener = listener;
  }

  private poke(): void {
    this.notified = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.notified = false;
      let claimed = 0;
      let waitMs = IDLE_POLL_MS;
      try {
        if (!this.listener) await this.listen().catch(() => undefined);
        const capacity = this.config.concurrency - this.inFlight.size;
        if (capacity > 0) {
          const due = await this.claimDue(capacity);
          claimed = due.length;
          for (const delivery of due) this.track(this.attempt(delivery));
        }
        waitMs = await this.msUntilNextDue();
      } catch (error) {
        this.runtime.logger.warn(`delivery loop failed; retrying: ${(error as Error).message}`);
      }
      if ((claimed > 0 || this.notified) && this.inFlight.size < this.config.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(10, Math.min(waitMs, IDLE_POLL_MS)));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => {
      this.inFlight.delete(work);
      this.poke();
    });
  }

  /** Leases due deliveries and reads their endpoint and event, in one round trip. */
  private claimDue(limit: number): Promise<ClaimedDelivery[]> {
    const leaseMs = this.config.timeoutMs + LEASE_MARGIN_MS;
    return this.prisma.$queryRaw<ClaimedDelivery[]>`
      WITH due AS (
        SELECT id FROM deliveries
        WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE deliveries d SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
        FROM due WHERE d.id = due.id
        RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.manual
      )
      SELECT c.id, c.attempt_count, c.manual, c.event_id,
             e.url, e.secret, e.status AS endpoint_status, e.deleted_at AS endpoint_deleted_at,
             ev.type AS event_type, ev.created AS event_created, ev.livemode AS event_livemode, ev.data AS event_data
      FROM claimed c
      LEFT JOIN webhook_endpoints e ON e.id = c.endpoint_id
      LEFT JOIN events ev ON ev.id = c.event_id`;
  }

  private async msUntilNextDue(): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ wait_ms: number | null }[]>`
      SELECT EXTRACT(EPOCH FROM (min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) - now())) * 1000 AS wait_ms
      FROM deliveries WHERE status = 'pending'`;
    return row?.wait_ms === null || row?.wait_ms === undefined ? IDLE_POLL_MS : Math.max(0, Number(row.wait_ms));
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    try {
      if (!claimed.url || !claimed.secret || claimed.endpoint_deleted_at || claimed.endpoint_status !== 'enabled' || !claimed.event_type) {
        await this.prisma.delivery.updateMany({ where: { id: claimed.id, status: 'pending' }, data: { status: 'failed', nextAttemptAt: null, leaseUntil: null, updatedAt: new Date() } });
        return;
      }
      // The envelope of the specification, serialised once; these exact bytes are signed and sent.
      const body = JSON.stringify({ id: claimed.event_id, type: claimed.event_type, created: Number(claimed.event_created), livemode: claimed.event_livemode, data: claimed.event_data });
      const attemptedAt = new Date();
      const result = await sendDelivery(claimed.url, body, signatureHeaders(claimed.secret, body), this.config.timeoutMs, this.config.allowPrivateUrls);
      await this.record(claimed, attemptedAt, result);
    } catch (error) {
      // The lease lapses and another pass retries the attempt.
      this.runtime.logger.warn(`delivery ${claimed.id} attempt failed to run: ${(error as Error).message}`);
    }
  }

  /**
   * Records the attempt and the delivery's next step in one statement. The attempt number
   * is unique per delivery: if another worker already recorded it (our lease lapsed), this
   * records nothing and leaves that worker's outcome in place.
   */
  private async record(claimed: ClaimedDelivery, attemptedAt: Date, result: SendResult): Promise<void> {
    const number = claimed.attempt_count + 1;
    const ok = result.statusCode !== null && isSuccessStatus(result.statusCode);
    const step = nextStep(number, { ok }, claimed.manual);
    const nextAttemptAt = step.status === 'pending' ? new Date(Date.now() + step.delayMs) : null;
    await this.prisma.$executeRaw`
      WITH attempt AS (
        INSERT INTO delivery_attempts (id, delivery_id, number, attempted_at, status_code, error, duration_ms, response_excerpt, manual)
        VALUES (${newId('wha')}, ${claimed.id}, ${number}, ${attemptedAt}, ${result.statusCode}, ${result.error}, ${result.durationMs}, ${result.responseExcerpt}, ${claimed.manual})
        ON CONFLICT (delivery_id, number) DO NOTHING
        RETURNING delivery_id
      )
      UPDATE deliveries SET attempt_count = ${number}, status = ${step.status}, next_attempt_at = ${nextAttemptAt},
             lease_until = NULL, manual = false, updated_at = now()
      WHERE id IN (SELECT delivery_id FROM attempt)`;
  }
}
