import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { type Clock, isDomainError } from '@recur/kernel';
import { claimDueRows, type DueRowsClaim, fromSqlRow } from '@recur/persistence';
import type { SettlementRecorder } from '../invoices/invoicing.client';
import type { PrismaService } from '../infrastructure/prisma.service';
import { PAWAPAY_SESSION_MS } from '../providers/pawapay.adapter';
import type { ProviderAdapters } from '../providers/provider-adapters.service';
import { EXPIRED, NOT_OWED_CODES, type Payment } from './payment';
import { fromPaymentRow } from './payment.mapper';
import { PAYMENTS_DUE_CHANNEL } from './payments.repository';
import type { PaymentsService } from './payments.service';

/** The janitor's rows: every payment with work left (due_at set). */
export const PAYMENT_ROWS: DueRowsTable = { table: 'payments', dueAt: 'due_at', leaseUntil: 'lease_until', pending: 'due_at IS NOT NULL' };

export interface PaymentJanitorOptions {
  leaseMs: number;
  concurrency: number;
  pollMs: number;
  /** The wait before status check n+1 of a pending payment. */
  checkDelayMs: (attempts: number) => number;
  /** The wait before telling invoicing again after attempt n failed. */
  applyDelayMs: (attempts: number) => number;
  /** How long a payment page session lives: a payment its provider never heard of is expired after it. */
  sessionMs: number;
}

export const DEFAULT_JANITOR_OPTIONS: PaymentJanitorOptions = {
  leaseMs: 30_000,
  concurrency: 8,
  pollMs: 1_000,
  checkDelayMs: (attempts) => Math.min(60_000 * 2 ** Math.max(0, attempts - 1), 30 * 60_000),
  applyDelayMs: (attempts) => Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 300_000),
  sessionMs: PAWAPAY_SESSION_MS,
};

/**
 * The payment janitor (Kill Bill has one): a JobWorker (@recur/jobs) over `payments`.
 * - A payment still pending when due is asked about at its provider (pawaPay's deposit status):
 *   a final answer settles it exactly as a callback would (under the row lock, once); a payment
 *   the provider never heard of once its page session is over is expired; otherwise it is asked
 *   again later, less and less often.
 * - A settled payment not yet told to invoicing is told (PayInvoice / FailInvoicePayment,
 *   idempotent by payment id) until invoicing answers; an outage keeps it due. A success the
 *   invoice refuses because it no longer owes it (voided, paid otherwise) is returned to the payer
 *   (PaymentsService.returnUnapplied): money is never kept for an invoice that did not take it.
 * Every settlement wakes it (NOTIFY at the commit), so invoicing hears of a payment at once.
 */
export class PaymentJanitor implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<Payment & { attempts: number }>;
  private readonly claimDuePayments: DueRowsClaim<Record<string, unknown>>;
  private readonly options: PaymentJanitorOptions;
  private readonly log: (message: string, fields?: Record<string, unknown>) => void;

  constructor(
    private readonly prisma: PrismaService,
    private readonly payments: PaymentsService,
    private readonly adapters: ProviderAdapters,
    private readonly invoicing: SettlementRecorder,
    private readonly now: Clock,
    options: Partial<PaymentJanitorOptions> & { databaseUrl?: string; log?: (message: string, fields?: Record<string, unknown>) => void } = {},
  ) {
    this.options = { ...DEFAULT_JANITOR_OPTIONS, ...options };
    this.log = options.log ?? (() => undefined);
    this.claimDuePayments = claimDueRows(prisma.pool, PAYMENT_ROWS, 'SELECT c.* FROM claimed c');
    this.worker = new JobWorker({
      name: 'payment janitor',
      clock: now,
      concurrency: this.options.concurrency,
      pollMs: this.options.pollMs,
      wakeUp: options.databaseUrl ? { databaseUrl: options.databaseUrl, channel: PAYMENTS_DUE_CHANNEL } : undefined,
      claim: (limit, at) => this.claim(limit, at),
      run: (payment) => this.run(payment),
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(PAYMENT_ROWS)))[0]?.next_due_at ?? null,
      log: this.log,
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.worker.stop();
  }

  async claim(limit: number, at: Date): Promise<(Payment & { attempts: number })[]> {
    const rows = await this.claimDuePayments(limit, at, this.options.leaseMs);
    // `pg` reads a bigint column as text; Prisma's rows, which fromPaymentRow takes, carry a bigint.
    return rows.map((row) => ({ ...fromPaymentRow(fromSqlRow({ ...row, amount: BigInt(row.amount as string) })), attempts: Number(row.attempts) }));
  }

  run(payment: Payment & { attempts: number }): Promise<void> {
    return payment.status === 'pending' ? this.checkAtProvider(payment) : this.tellInvoicing(payment);
  }

  private async checkAtProvider(payment: Payment & { attempts: number }): Promise<void> {
    try {
      const status = await this.adapters.forPayment(payment).status(payment);
      if (status.state === 'settled') {
        await this.payments.settleById(payment.id, status.outcome);
        return;
      }
      if (status.state === 'not_found' && this.now().getTime() - payment.createdAt.getTime() > this.options.sessionMs) {
        await this.payments.settleById(payment.id, EXPIRED);
        return;
      }
      await this.later(payment, this.options.checkDelayMs(payment.attempts + 1), null);
    } catch (error) {
      await this.later(payment, this.options.checkDelayMs(payment.attempts + 1), describe(error));
    }
  }

  private async tellInvoicing(payment: Payment & { attempts: number }): Promise<void> {
    try {
      // An abandoned page session is no failed attempt, a canceled payment none either: the invoice stays as it was.
      const result = payment.failureCode === EXPIRED.code || payment.status === 'canceled' ? 'applied' : await this.invoicing.apply(payment);
      if (result !== 'applied' && payment.status === 'succeeded' && NOT_OWED_CODES.includes(result.refused)) {
        this.log('payment janitor: the invoice no longer owed a succeeded payment; returning it', { payment: payment.id, refused: result.refused });
        await this.payments.returnUnapplied(payment, result.refused);
        return;
      }
      const note = result === 'applied' ? null : `invoicing refused: ${result.refused}`;
      if (note) this.log('payment janitor: invoicing refused the settlement', { payment: payment.id, refused: note });
      await this.prisma.$executeRaw`
        UPDATE payments SET invoice_applied_at = ${this.now()}, due_at = NULL, lease_until = NULL, last_error = ${note}, attempts = attempts + 1
        WHERE id = ${payment.id} AND status <> 'pending'`;
    } catch (error) {
      this.log('payment janitor: telling invoicing failed; will retry', { payment: payment.id, error: describe(error) });
      await this.later(payment, this.options.applyDelayMs(payment.attempts + 1), describe(error));
    }
  }

  /** Due again after `delayMs` (unless a settlement moved it meanwhile: the status must not have changed). */
  private async later(payment: Payment & { attempts: number }, delayMs: number, error: string | null): Promise<void> {
    const now = this.now();
    await this.prisma.$executeRaw`
      UPDATE payments SET attempts = attempts + 1, last_error = ${error}, lease_until = NULL, due_at = ${new Date(now.getTime() + delayMs)}
      WHERE id = ${payment.id} AND status = ${payment.status} AND invoice_applied_at IS NULL`;
  }
}

const describe = (error: unknown): string => (isDomainError(error) ? `${error.code}: ${error.message}` : (error as Error).message);
