import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { newId } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { signatureHeaders } from '@recur/webhooks';
import { Client } from 'pg';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { WEBHOOK_CONFIG } from '../tokens';
import type { WebhookConfig } from '../webhook-config';
import { DELIVERIES_CHANNEL } from './deliveries.service';
import { sendDelivery, type SendResult } from './http-sender';
import { isSuccessStatus, nextStep } from './schedule';

interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt_count: number;
  manual: boolean;
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
    listener.on('notification', () => this.wake?.());
    listener.on('error', () => (this.listener = undefined));
    await listener.connect();
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    this.listener = listener;
  }

  private async run(): Promise<void> {
    while (this.running) {
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
      if (claimed > 0 && this.inFlight.size < this.config.concurrency) continue;
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
      this.wake?.();
    });
  }

  private claimDue(limit: number): Promise<ClaimedDelivery[]> {
    const leaseMs = this.config.timeoutMs + LEASE_MARGIN_MS;
    return this.prisma.$queryRaw<ClaimedDelivery[]>`
      UPDATE deliveries d SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
      FROM (
        SELECT id FROM deliveries
        WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) due
      WHERE d.id = due.id
      RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.manual`;
  }

  private async msUntilNextDue(): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ wait_ms: number | null }[]>`
      SELECT EXTRACT(EPOCH FROM (min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) - now())) * 1000 AS wait_ms
      FROM deliveries WHERE status = 'pending'`;
    return row?.wait_ms === null || row?.wait_ms === undefined ? IDLE_POLL_MS : Math.max(0, Number(row.wait_ms));
  }

  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    try {
      const [endpoint, event] = await Promise.all([
        this.prisma.webhookEndpoint.findUnique({ where: { id: claimed.endpoint_id } }),
        this.prisma.event.findUnique({ where: { id: claimed.event_id } }),
      ]);
      if (!endpoint || endpoint.deletedAt || endpoint.status !== 'enabled' || !event) {
        await this.prisma.delivery.updateMany({ where: { id: claimed.id, status: 'pending' }, data: { status: 'failed', nextAttemptAt: null, leaseUntil: null, updatedAt: new Date() } });
        return;
      }
      // The envelope of the specification, serialised once; these exact bytes are signed and sent.
      const body = JSON.stringify({ id: event.id, type: event.type, created: Number(event.created), livemode: event.livemode, data: event.data });
      const attemptedAt = new Date();
      const result = await sendDelivery(endpoint.url, body, signatureHeaders(endpoint.secret, body), this.config.timeoutMs, this.config.allowPrivateUrls);
      await this.record(claimed, attemptedAt, result);
    } catch (error) {
      // The lease lapses and another pass retries the attempt.
      this.runtime.logger.warn(`delivery ${claimed.id} attempt failed to run: ${(error as Error).message}`);
    }
  }

  private async record(claimed: ClaimedDelivery, attemptedAt: Date, result: SendResult): Promise<void> {
    const number = claimed.attempt_count + 1;
    const ok = result.statusCode !== null && isSuccessStatus(result.statusCode);
    const step = nextStep(number, { ok }, claimed.manual);
    try {
      await this.prisma.$transaction(async (tx) => {
        await tx.deliveryAttempt.create({
          data: {
            id: newId('wha'),
            deliveryId: claimed.id,
            number,
            attemptedAt,
            statusCode: result.statusCode,
            error: result.error,
            durationMs: result.durationMs,
            responseExcerpt: result.responseExcerpt,
            manual: claimed.manual,
          },
        });
        await tx.delivery.update({
          where: { id: claimed.id },
          data: {
            attemptCount: number,
            status: step.status,
            nextAttemptAt: step.status === 'pending' ? new Date(Date.now() + step.delayMs) : null,
            leaseUntil: null,
            manual: false,
            updatedAt: new Date(),
          },
        });
      });
    } catch (error) {
      // Another worker recorded this attempt number after our lease lapsed: keep its record.
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return;
      throw error;
    }
  }
}
