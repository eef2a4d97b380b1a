import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { type DueRowsTable, JobWorker, nextDueAtSql } from '@recur/jobs';
import { type Clock, isDomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { claimDueRows } from '@recur/persistence';
import type { PrismaService } from '../infrastructure/prisma.service';
import type { PaymentsService } from '../payments/payments.service';
import type { WalletTopUp } from './wallet';
import type { WalletInvoicing } from './wallet-invoicing.client';
import { fromTopUpRow } from './wallet.mapper';
import { WALLET_TOP_UPS_DUE_CHANNEL, type WalletsRepository } from './wallets.repository';

/** The worker's rows: top-ups with work left (due_at set). */
export const TOP_UP_ROWS: DueRowsTable = { table: 'wallet_top_ups', dueAt: 'due_at', leaseUntil: 'lease_until', pending: 'due_at IS NOT NULL' };

export interface AutoRechargeWorkerOptions {
  leaseMs: number;
  pollMs: number;
  /** The wait before try n+1 after an outage (invoicing or the provider unreachable). */
  retryDelayMs: (attempts: number) => number;
  databaseUrl?: string;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * Carries out automatic top-ups (auto recharge), a JobWorker (@recur/jobs) over
 * `wallet_top_ups`. A `requested` top-up (kept in the transaction of the debit that crossed the
 * threshold) gets its invoice (CreateInvoice, idempotent by the top-up id) and a payment started
 * with the wallet's stored phone number and provider, in one transaction with the top-up
 * turning `pending` and `wallet.auto_recharge`. The payment is a push to that phone, as nobody
 * stands at a page: live, a pawaPay deposit (`POST /v2/deposits`) whose depositId is derived from
 * the top-up's id, so a retry after a lost answer or a crash asks for the same deposit; it settles
 * by callback or the janitor's status check like any live payment. On the sandbox the simulated
 * phone approves the push at once, and the magic number decides the outcome as Approve would
 * (docs/api/wallets.md). The paid invoice then credits the wallet like any top-up.
 */
export class AutoRechargeWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly worker: JobWorker<string>;
  private readonly log: (message: string, fields?: Record<string, unknown>) => void;

  constructor(
    private readonly prisma: PrismaService,
    private readonly wallets: WalletsRepository,
    private readonly invoicing: WalletInvoicing,
    private readonly payments: PaymentsService,
    private readonly now: Clock,
    private readonly options: AutoRechargeWorkerOptions,
  ) {
    this.log = options.log ?? (() => undefined);
    const claimDueTopUps = claimDueRows<{ id: string }>(prisma.pool, TOP_UP_ROWS, 'SELECT c.id FROM claimed c');
    this.worker = new JobWorker({
      name: 'wallet auto recharge',
      clock: now,
      concurrency: 2,
      pollMs: options.pollMs,
      wakeUp: options.databaseUrl ? { databaseUrl: options.databaseUrl, channel: WALLET_TOP_UPS_DUE_CHANNEL } : undefined,
      claim: async (limit, at) => (await claimDueTopUps(limit, at, options.leaseMs)).map((row) => row.id),
      run: (id) => this.run(id),
      nextDueAt: async () => (await this.prisma.$queryRawUnsafe<{ next_due_at: Date | null }[]>(nextDueAtSql(TOP_UP_ROWS)))[0]?.next_due_at ?? null,
      log: this.log,
    });
  }

  onApplicationBootstrap(): Promise<void> {
    return this.worker.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.worker.stop();
  }

  async run(id: string): Promise<void> {
    const row = await this.prisma.walletTopUp.findUnique({ where: { id } });
    if (!row) return;
    const topUp = fromTopUpRow(row);
    try {
      if (topUp.status === 'requested') await this.start(topUp);
      else if (topUp.status === 'pending') await this.settleSandboxPush(topUp);
      else await this.prisma.walletTopUp.update({ where: { id }, data: { dueAt: null, leaseUntil: null } });
    } catch (error) {
      const message = isDomainError(error) ? `${error.code}: ${error.message}` : (error as Error).message;
      if (isDomainError(error) && error.kind !== 'unavailable') {
        // A refusal (the stored number no longer valid, the invoice refused…) will not heal by waiting.
        this.log('auto recharge: refused; the top-up fails', { top_up: id, error: message });
        await this.prisma.walletTopUp.update({ where: { id }, data: { status: 'failed', dueAt: null, leaseUntil: null, lastError: message, updatedAt: this.now() } });
        return;
      }
      this.log('auto recharge: will retry', { top_up: id, error: message });
      await this.prisma.walletTopUp.update({
        where: { id },
        data: { attempts: { increment: 1 }, lastError: message, leaseUntil: null, dueAt: new Date(this.now().getTime() + this.options.retryDelayMs(row.attempts + 1)) },
      });
    }
  }

  /** The invoice, then the payment with the stored number and provider, then `pending` and wallet.auto_recharge. */
  private async start(topUp: WalletTopUp): Promise<void> {
    const wallet = await this.wallets.get(topUp.tenant, topUp.walletId);
    const { phoneNumber, provider } = wallet.autoRecharge;
    const invoice = await this.invoicing.raiseTopUpInvoice(wallet, topUp.id, topUp.amount, '', topUp.id, true);
    await this.prisma.$transaction(async (tx) => {
      const current = await this.wallets.getTopUpForUpdate(tx, topUp.id);
      if (current?.status !== 'requested') return;
      const payment = await this.payments.initiatePush(
        tx, topUp.tenant, { id: invoice.id, number: invoice.number, status: invoice.status, amountDue: money(topUp.amount, topUp.currency) }, { phoneNumber, provider }, topUp.id,
      );
      const now = this.now();
      const started: WalletTopUp = { ...current, status: 'pending', invoiceId: invoice.id, paymentUrl: invoice.paymentUrl, paymentId: payment.id, updatedAt: now };
      // A sandbox payment is settled by the simulated phone on the worker's next look.
      await this.wallets.saveTopUp(tx, started, payment.adapter === 'sandbox' && payment.status === 'pending' ? now : null);
      await this.wallets.publish(tx, [{ kind: 'auto_recharge', wallet, topUp: started, at: now }]);
    }, { maxWait: 10_000, timeout: 15_000 });
  }

  /** The sandbox's push approval: what Approve on the payer page does for the stored number. */
  private async settleSandboxPush(topUp: WalletTopUp): Promise<void> {
    const payment = await this.payments.get(topUp.tenant, topUp.paymentId);
    if (payment.adapter === 'sandbox' && payment.status === 'pending') await this.payments.decideSandbox(payment.pageToken, 'approve');
    await this.prisma.walletTopUp.update({ where: { id: topUp.id }, data: { dueAt: null, leaseUntil: null } });
  }
}
