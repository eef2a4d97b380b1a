import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, failedPrecondition, type TenantRef } from '@recur/kernel';
import type { creditNoteV1 } from '@recur/contracts';
import { type Money, money, sum } from '@recur/money';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { InvoicingClient } from '../invoices/invoicing.client';
import { adapterFor } from '../payments/payment';
import { PaymentsRepository } from '../payments/payments.repository';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';
import type { ReceivedCallback, RefundFinal } from '../providers/payment-provider';
import { ProviderAdapters } from '../providers/provider-adapters.service';
import { WalletsService } from '../wallets/wallets.service';
import {
  assertRefundable, checkRefundReason, creditRefundable, creditRefundRequestId, newCreditRefund, newRefund, newWalletRefund, type Refund, type RefundableInvoice, refundAmount, withProviderResult,
} from './refund';
import { REFUNDS_DUE_CHANNEL, RefundsRepository } from './refunds.repository';

/**
 * Where a refund got: the credit note invoicing issued, the provider's refusal, still at the
 * provider (processing), or — for the return of an unapplied payment, which has no credit note —
 * returned to the payer.
 */
export type RefundOutcome =
  | { refund: Refund; creditNote: creditNoteV1.CreditNote }
  | { refund: Refund; returned: true }
  | { refund: Refund; refused: string }
  | { refund: Refund; processing: true };

export type RefundCallbackOutcome = 'settled' | 'already_settled' | 'pending' | 'unknown_refund';

/** Status checks of a refund the provider is processing: at most this far apart. */
const REFUND_STATUS_CHECK_MAX_MS = 30 * 60_000;

/**
 * Refunds: payments refunds at the provider (or, for an invoice a wallet paid, credits the
 * wallet back at once), invoicing records the credit note. The refund
 * row is committed before the provider is called; every later step is idempotent (the
 * provider by our refund id, invoicing by the credit note id), so whoever finishes a refund —
 * the request itself, its repeat, or the refund worker after a crash — finishes it once.
 */
@Injectable()
export class RefundsService {
  constructor(
    private readonly refunds: RefundsRepository,
    private readonly payments: PaymentsRepository,
    private readonly adapters: ProviderAdapters,
    private readonly invoicing: InvoicingClient,
    private readonly wallets: WalletsService,
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  /**
   * Keeps a new refund of `invoice` (read from invoicing by the caller) of `requested` minor units
   * (all that is left when absent), or answers the one a repeat of this request started. Refunds
   * of one invoice are decided one at a time (the invoice's lock), so whatever races, their sum
   * never exceeds what was paid (`refundAmount`).
   */
  async begin(tenant: TenantRef, invoiceBeforeLock: RefundableInvoice, reason: string, requestId: string, requested?: bigint, reread?: () => Promise<RefundableInvoice>): Promise<Refund> {
    const checkedReason = checkRefundReason(reason);
    return this.prisma.$transaction(async (tx) => {
      await this.payments.lockInvoice(tx, tenant, invoiceBeforeLock.id);
      // Credit notes without money are issued under this lock: read after it, the invoice's credits are current.
      const invoice = reread ? await reread() : invoiceBeforeLock;
      const repeated = requestId === '' ? undefined : await this.refunds.findByRequest(tx, tenant, invoice.id, requestId);
      if (repeated) return repeated;
      assertRefundable(invoice);
      const earlier = await this.refunds.activeOf(tx, tenant, invoice.id);
      const now = this.now();
      const payment = await this.payments.findSucceeded(tx, tenant, invoice.id);
      if (payment) {
        const refund = newRefund(tenant, invoice.id, payment, checkedReason, requestId, now, refundAmount(invoice, payment.amount, earlier, requested));
        await this.refunds.insert(tx, refund, this.recoverAt(now));
        return refund;
      }
      // A wallet paid it: the money goes back to the wallet, in this transaction — done at once.
      const debit = await this.wallets.findInvoiceDebit(tx, tenant, invoice.id);
      if (!debit) throw failedPrecondition('invoice_not_paid', `Invoice '${invoice.id}' was paid neither through a payment nor by a wallet; there is nothing to refund.`);
      const paid = money(-debit.amount, debit.currency);
      const refund = newWalletRefund(tenant, invoice.id, { id: debit.id, amount: paid }, checkedReason, requestId, now, refundAmount(invoice, paid, earlier, requested));
      await this.refunds.insert(tx, refund, this.recoverAt(now));
      await this.wallets.creditRefund(tx, debit, refund);
      return refund;
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /**
   * Refunds a final invoice's credit (`refund: true` on a cancellation; docs/api/subscriptions.md#refunding-the-credit)
   * through the payment that settled the period's invoice, in the caller's transaction (the
   * collection consumer's, with its inbox claim). Under that invoice's lock, as every refund of it:
   * what the payment still holds bounds the refund, invoicing takes that much of the credit out of
   * the balance (once per final invoice: a redelivery after a crash gets the same reservation),
   * and the refund is kept, due for the worker at once. Nothing is refunded when the period's
   * invoice was not paid or is refunded already: the credit stays in the balance.
   */
  async refundCredit(tx: Prisma.TransactionClient, tenant: TenantRef, credit: { invoiceId: string; periodInvoiceId: string; amount: Money }): Promise<Refund | undefined> {
    await this.payments.lockInvoice(tx, tenant, credit.periodInvoiceId);
    const repeated = await this.refunds.findByRequest(tx, tenant, credit.periodInvoiceId, creditRefundRequestId(credit.invoiceId));
    if (repeated) return repeated;
    const invoice = await this.invoicing.payableInvoice(tenant, credit.periodInvoiceId);
    const earlier = await this.refunds.activeOf(tx, tenant, invoice.id);
    const payment = await this.payments.findSucceeded(tx, tenant, invoice.id);
    const debit = payment ? undefined : await this.wallets.findInvoiceDebit(tx, tenant, invoice.id);
    const paid = payment ? { id: payment.id, amount: payment.amount } : debit ? { id: debit.id, amount: money(-debit.amount, debit.currency) } : undefined;
    if (!paid) return undefined;
    const refundable = creditRefundable(invoice, paid.amount, earlier, credit.amount);
    if (refundable.amountMinor <= 0) return undefined;
    let reserved = await this.invoicing.reserveCreditRefund(tenant, credit.invoiceId, refundable);
    if (reserved.amountMinor > refundable.amountMinor) {
      // A reservation made before a crash, when more was refundable: refund what is, give the rest back.
      await this.invoicing.settleCreditRefund(tenant, credit.invoiceId, refundable);
      reserved = refundable;
    }
    if (reserved.amountMinor <= 0) return undefined;
    const now = this.now();
    const refund = newCreditRefund(tenant, invoice.id, paid, credit.invoiceId, now, reserved, !payment);
    await this.refunds.insert(tx, refund, now);
    if (debit) await this.wallets.creditRefund(tx, debit, refund);
    await tx.$executeRaw`SELECT pg_notify(${REFUNDS_DUE_CHANNEL}, '')`;
    return refund;
  }

  /**
   * A credit note that moves no money (docs/api/credit-notes.md), decided under the invoice's lock
   * that refunds and payment initiations take: invoicing is told what refunds not failed (done or
   * still in flight) give back, and refunds read the invoice's credits under the same lock, so
   * together they never exceed the total. A pending payment of the invoice is refused
   * (`invoice_payment_pending`): it asks the amount due it was started with.
   */
  async credit(tenant: TenantRef, invoiceId: string, request: { amount: bigint | undefined; reason: string; memo: string; metadata: Record<string, string>; requestId: string }): Promise<creditNoteV1.CreditNote> {
    return this.prisma.$transaction(async (tx) => {
      await this.payments.lockInvoice(tx, tenant, invoiceId);
      const pending = await this.payments.findPending(tx, tenant, invoiceId);
      if (pending) {
        throw failedPrecondition('invoice_payment_pending', `Payment '${pending.id}' of invoice '${invoiceId}' is pending: credit the invoice once it has succeeded or failed (docs/api/credit-notes.md#a-pending-payment).`);
      }
      const underWay = await this.refunds.activeOf(tx, tenant, invoiceId);
      const refundsUnderWay = underWay.length === 0 ? null : sum(underWay[0].amount.currency, underWay.map((refund) => refund.amount));
      return this.invoicing.issueCreditNote(tenant, invoiceId, request, refundsUnderWay);
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /**
   * Carries a refund as far as it goes now: the request to the provider (while pending); with
   * `checkStatus` (the refund worker), the provider's status of a refund it is processing; then,
   * once the provider completed it, invoicing's credit note. A refund the provider accepted but
   * has not completed answers `processing` (its callback or a later status check settles it).
   * Throws `unavailable` while the provider or invoicing cannot be reached; the row stays due.
   */
  async complete(refundId: string, options: { checkStatus?: boolean } = {}): Promise<RefundOutcome> {
    let refund = (await this.refunds.get(refundId))!;
    if (refund.status === 'pending') refund = await this.askProvider(refund);
    if (refund.status === 'processing' && options.checkStatus) refund = await this.checkAtProvider(refund);
    if (refund.status === 'processing') return { refund, processing: true };
    if (refund.status === 'failed') {
      // A refund of credit that failed gives the credit back to the balance, once.
      if (refund.kind === 'customer_credit' && !refund.recordedAt) {
        await this.invoicing.settleCreditRefund(refund.tenant, refund.creditInvoiceId!, money(0, refund.amount.currency));
        await this.refunds.markRecorded(refund.id, this.now(), null);
      }
      return { refund, refused: `${refund.failureCode}: ${refund.failureMessage}` };
    }
    if (refund.kind === 'unapplied_payment' || refund.kind === 'customer_credit') {
      if (!refund.recordedAt) await this.refunds.markRecorded(refund.id, this.now(), null);
      return { refund, returned: true };
    }
    const recorded = await this.invoicing.recordRefund(refund);
    if ('refused' in recorded) {
      // The invoice cannot take it (e.g. refunded by another credit note): kept for an operator, not retried.
      await this.refunds.markRecorded(refund.id, this.now(), `invoicing refused: ${recorded.refused}`);
      return { refund, refused: recorded.refused };
    }
    if (!refund.recordedAt) await this.refunds.markRecorded(refund.id, this.now(), null);
    return { refund, creditNote: recorded.creditNote };
  }

  /**
   * Authenticates a provider's refund callback and settles the refund it names (once). A
   * callback may only settle a refund of its own adapter's world: never a sandbox refund.
   */
  async handleCallback(provider: string, callback: ReceivedCallback): Promise<{ outcome: RefundCallbackOutcome; refundId: string }> {
    const adapter = this.adapters.byName(provider);
    const parsed = await adapter.parseRefundCallback(callback);
    const refund = await this.refunds.findByProviderRefundId(parsed.providerRefundId);
    if (!refund || adapterFor(refund.tenant) !== adapter.name) return { outcome: 'unknown_refund', refundId: '' };
    if (!parsed.final) return { outcome: 'pending', refundId: refund.id };
    const { changed } = await this.refunds.settle(refund.id, parsed.final, this.now());
    return { outcome: changed ? 'settled' : 'already_settled', refundId: refund.id };
  }

  /** The wait before status check n+1 of a refund the provider processes: REFUND_RECOVERY_AFTER_MS doubling, at most 30 min. */
  statusCheckDelayMs(attempts: number): number {
    return Math.min(this.config.refundRecoveryAfterMs * 2 ** Math.max(0, attempts), REFUND_STATUS_CHECK_MAX_MS);
  }

  /** Asks the provider to refund (idempotent there by our refund id) and records its answer once. */
  private async askProvider(refund: Refund): Promise<Refund> {
    const payment = await this.payments.get(refund.tenant, refund.paymentId);
    const result = await this.adapters.forPayment(payment).refund({ refundId: refund.providerRefundId, payment, amount: refund.amount });
    const now = this.now();
    const answered = withProviderResult(refund, result);
    const nextAt = answered.status === 'processing' ? new Date(now.getTime() + this.statusCheckDelayMs(0)) : this.recoverAt(now);
    return this.refunds.saveProviderResult(answered, now, nextAt);
  }

  /**
   * The refund worker's status check of a refund the provider processes: a final status settles
   * it exactly as its callback would (under the row lock, once — whichever comes first). A
   * refund the provider does not know (its acceptance was lost) is asked for again, with the same id.
   */
  private async checkAtProvider(refund: Refund): Promise<Refund> {
    const payment = await this.payments.get(refund.tenant, refund.paymentId);
    const adapter = this.adapters.forPayment(payment);
    const request = { refundId: refund.providerRefundId, payment, amount: refund.amount };
    const status = await adapter.refundStatus(request);
    let final: RefundFinal | null = status.state === 'final' ? status.final : null;
    if (status.state === 'not_found') {
      const result = await adapter.refund(request);
      if ('rejected' in result) final = { status: 'failed', ...result.rejected };
      else if ('completed' in result) final = { status: 'completed' };
    }
    return final ? (await this.refunds.settle(refund.id, final, this.now())).refund : refund;
  }

  /** When the worker takes over a refund this process was carrying, should it not finish. */
  private recoverAt(now: Date): Date {
    return new Date(now.getTime() + this.config.refundRecoveryAfterMs);
  }
}
