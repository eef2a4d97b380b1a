import { REFUND_REASONS, type RefundReason } from '@recur/vocabulary';
import { hasPrefix, invalidArgument, type TenantRef } from '@recur/kernel';
import { add, compare, type Money, subtract } from '@recur/money';
import { assertMove, type Invoice, type InvoiceChange } from '../invoices/invoice';

/** The document of a refund, in full or in part, of a paid invoice. */
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
 * A refund of a paid invoice, in full or in part: a credit note of the refund's amount is issued
 * (`credit_note.created`) and the invoice's `amount_refunded` grows by it; when that reaches the
 * amount paid the invoice becomes `refunded` (`invoice.refunded`, carrying the last credit note).
 * A refund never gives back more than was paid and not yet refunded.
 */
export function refundInvoice(invoice: Invoice, refund: RefundRecord, number: string, now: Date): InvoiceChange & { creditNote: CreditNote } {
  assertMove(invoice, 'refund');
  if (!hasPrefix(refund.creditNoteId, 'cn')) throw invalidArgument('credit_note_id', 'credit_note_id must be a credit note id (cn_…)');
  const refundable = subtract(invoice.amountPaid, invoice.amountRefunded);
  if (refund.amount.currency !== invoice.currency || refund.amount.amountMinor <= 0 || compare(refund.amount, refundable) > 0) {
    throw invalidArgument('amount', `a refund is of at most what was paid and not yet refunded (${refundable.amountMinor} ${invoice.currency})`, 'amount_mismatch');
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
  // amount_paid keeps what was paid: the credit notes record what went back.
  const amountRefunded = add(invoice.amountRefunded, refund.amount);
  const inFull = compare(amountRefunded, invoice.amountPaid) === 0;
  const refunded: Invoice = { ...invoice, amountRefunded, status: inFull ? 'refunded' : invoice.status, updatedAt: now };
  const events: InvoiceChange['events'] = [{ kind: 'credit_note_issued', invoice: refunded, creditNote }];
  if (inFull) events.push({ kind: 'refunded', invoice: refunded, creditNote });
  return { invoice: refunded, creditNote, events };
}
