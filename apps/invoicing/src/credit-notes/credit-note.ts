import { REFUND_REASONS, type RefundReason } from '@recur/vocabulary';
import { hasPrefix, invalidArgument, type TenantRef } from '@recur/kernel';
import type { Money } from '@recur/money';
import { assertMove, type Invoice, type InvoiceChange } from '../invoices/invoice';

/** The document of a full refund of a paid invoice. */
export interface CreditNote {
  id: string;
  tenant: TenantRef;
  number: string;
  invoiceId: string;
  invoiceNumber: string;
  customer: Invoice['customer'];
  amount: Money;
  reason: RefundReason;
  paymentId: string;
  createdAt: Date;
}

/** What the payments service reports of a refund that succeeded at the provider. */
export interface RefundRecord {
  creditNoteId: string;
  paymentId: string;
  amount: Money;
  reason: string;
}

export function checkRefundReason(reason: string): RefundReason {
  if (!(REFUND_REASONS as readonly string[]).includes(reason)) throw invalidArgument('reason', `reason must be one of ${REFUND_REASONS.join(', ')}`);
  return reason as RefundReason;
}

/** The gapless number's text: `CN-000001` (six digits at least), its own sequence per app. */
export const formatCreditNoteNumber = (sequence: number): string => `CN-${String(sequence).padStart(6, '0')}`;

/**
 * A paid invoice is refunded in full: it becomes `refunded` and a credit note of its amount paid is issued (`invoice.refunded`, carrying both).
 */
export function refundInvoice(invoice: Invoice, refund: RefundRecord, number: string, now: Date): InvoiceChange & { creditNote: CreditNote } {
  assertMove(invoice, 'refund');
  if (!hasPrefix(refund.creditNoteId, 'cn')) throw invalidArgument('credit_note_id', 'credit_note_id must be a credit note id (cn_…)');
  if (refund.amount.currency !== invoice.currency || refund.amount.amountMinor !== invoice.amountPaid.amountMinor) {
    throw invalidArgument('amount', `a refund is of the full amount paid (${invoice.amountPaid.amountMinor} ${invoice.currency})`, 'amount_mismatch');
  }
  const creditNote: CreditNote = {
    id: refund.creditNoteId,
    tenant: invoice.tenant,
    number,
    invoiceId: invoice.id,
    invoiceNumber: invoice.number ?? '',
    customer: invoice.customer,
    amount: refund.amount,
    reason: checkRefundReason(refund.reason),
    paymentId: refund.paymentId,
    createdAt: now,
  };
  // amount_paid keeps what was paid: the credit note records that it went back.
  const refunded: Invoice = { ...invoice, status: 'refunded', updatedAt: now };
  return { invoice: refunded, creditNote, events: [{ kind: 'refunded', invoice: refunded, creditNote }] };
}
