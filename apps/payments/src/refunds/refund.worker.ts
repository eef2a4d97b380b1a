import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { type Clock, isDomainError } from '@recur/kernel';
import { claimDueRows } from '@recur/persistence';
import type { PrismaService } from '../infrastructure/prisma.service';
import { REFUNDS_DUE_CHANNEL, RefundsRepository } from './refunds.repository';
import type { RefundsService } from './refunds.service';

/** The worker's rows: every refund with work left (due_at set). */
export const REFUND_ROWS: DueRowsTable = { table: 'refunds', dueAt: 'due_at', leaseUntil: 'lease_until', pending: 'due_at IS NOT NULL' };

interface ClaimedRefund {
  id: string;
  attempts: number;
}

/**
 * Finishes refunds nobody finished: a request whose process died between keeping the refund and
 * recording its credit note (the row is due `REFUND_RECOVERY_AFTER_MS` after it was kept), or
 * whose provider or invoicing could not be reached (retried 1 s doubling to 5 min); and asks the
 * provider about refunds it accepted but has not completed (`processing`: REFUND_RECOVERY_AFTER_MS
 * after acceptance, then doubling waits up to 30 min) until a status check or the refund callback
 * settles them; a completed one goes on to its credit note at once (the settlement's NOTIFY). A JobWorker
 * (@recur/jobs) with leases, so replicas share the work and a dead worker's refund is taken again.
 */
export class RefundWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<ClaimedRefund>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly service: RefundsService,
    private readonly refunds: RefundsRepository,
    private readonly now: Clock,
    options: { databaseUrl?: string; pollMs?: number; log?: (message: string, fields?: Record<string, unknown>) => void } = {},
  ) {
    const log = options.log ?? (() => undefined);
    const claimDueRefunds = claimDueRows<ClaimedRefund>(prisma.pool, REFUND_ROWS, 'SELECT c.id, c.attempts FROM claimed c');
    this.worker = new JobWorker({
      name: 'refunds',
      clock: now,
      concurrency: 4,
      pollMs: options.pollMs ?? 1_000,
      wakeUp: options.databaseUrl ? { databaseUrl: options.databaseUrl, channel: REFUNDS_DUE_CHANNEL } : undefined,
      claim: (limit, at) => claimDueRefunds(limit, at, 30_000),
      run: async (row) => {
        try {
          const outcome = await this.service.complete(row.id, { checkStatus: true });
          if ('processing' in outcome) await this.refunds.checkLater(row.id, this.now(), this.service.statusCheckDelayMs(row.attempts + 1));
        } catch (error) {
          const message = isDomainError(error) ? `${error.code}: ${error.message}` : (error as Error).message;
          log('refunds: finishing a refund failed; will retry', { refund: row.id, error: message });
          // The status as this run left it: a callback that settled the refund meanwhile made it due at once.
          const seen = (await this.refunds.get(row.id))?.status ?? 'pending';
          await this.refunds.later(row.id, this.now(), Math.min(1_000 * 2 ** row.attempts, 300_000), message, seen);
        }
      },
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(REFUND_ROWS)))[0]?.next_due_at ?? null,
      log,
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.worker.stop();
  }
}
