import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, failedPrecondition, type TenantRef } from '@recur/kernel';
import type { creditNoteV1 } from '@recur/contracts';
import { PrismaService } from '../infrastructure/prisma.service';
import { InvoicingClient } from '../invoices/invoicing.client';
import { PaymentsRepository } from '../payments/payments.repository';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';
import { ProviderAdapters } from '../providers/provider-adapters.service';
import { alreadyRefunded, assertRefundable, checkRefundReason, newRefund, type Refund, type RefundableInvoice, withProviderResult } from './refund';
import { RefundsRepository } from './refunds.repository';

/** How a refund ended: the credit note invoicing issued, or the provider's refusal. */
export type RefundOutcome = { refund: Refund; creditNote: creditNoteV1.CreditNote } | { refund: Refund; refused: string };

/**
 * Refunds: payments refunds at the provider, invoicing records the credit note. The refund
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
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  /**
   * Keeps a new refund of `invoice` (read from invoicing by the caller), or answers the one a
   * repeat of this request started. Refunds of one invoice are decided one at a time (the
   * invoice's lock), so of two at the same moment one is kept and the other is refused.
   */
  async begin(tenant: TenantRef, invoice: RefundableInvoice, reason: string, requestId: string): Promise<Refund> {
    const checkedReason = checkRefundReason(reason);
    return this.prisma.$transaction(async (tx) => {
      await this.payments.lockInvoice(tx, tenant, invoice.id);
      const existing = await this.refunds.findActive(tx, tenant, invoice.id);
      if (existing) {
        if (requestId !== '' && existing.requestId === requestId) return existing;
        throw alreadyRefunded(invoice.id);
      }
      assertRefundable(invoice);
      const payment = await this.payments.findSucceeded(tx, tenant, invoice.id);
      if (!payment) throw failedPrecondition('invoice_not_paid', `Invoice '${invoice.id}' was not paid through a payment; there is nothing to refund at a provider.`);
      const now = this.now();
      const refund = newRefund(tenant, invoice.id, payment, checkedReason, requestId, now);
      await this.refunds.insert(tx, refund, this.recoverAt(now));
      return refund;
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /**
   * Carries a refund to its end: the provider (while pending), then invoicing's credit note.
   * Throws `unavailable` while either cannot be reached; the row stays due for the worker.
   */
  async complete(refundId: string): Promise<RefundOutcome> {
    let refund = (await this.refunds.get(refundId))!;
    if (refund.status === 'pending') {
      const payment = await this.payments.get(refund.tenant, refund.paymentId);
      const result = await this.adapters.forPayment(payment).refund({ refundId: refund.providerRefundId, payment, amount: refund.amount });
      const now = this.now();
      refund = await this.refunds.saveProviderResult(withProviderResult(refund, result), now, this.recoverAt(now));
    }
    if (refund.status === 'failed') return { refund, refused: `${refund.failureCode}: ${refund.failureMessage}` };
    const recorded = await this.invoicing.recordRefund(refund);
    if ('refused' in recorded) {
      // The invoice cannot take it (e.g. refunded by another credit note): kept for an operator, not retried.
      await this.refunds.markRecorded(refund.id, this.now(), `invoicing refused: ${recorded.refused}`);
      return { refund, refused: recorded.refused };
    }
    if (!refund.recordedAt) await this.refunds.markRecorded(refund.id, this.now(), null);
    return { refund, creditNote: recorded.creditNote };
  }

  /** When the worker takes over a refund this process was carrying, should it not finish. */
  private recoverAt(now: Date): Date {
    return new Date(now.getTime() + this.config.refundRecoveryAfterMs);
  }
}
