import { REFUND_REASONS, type RefundReason } from '@recur/vocabulary';
import { hasPrefix, invalidArgument, type TenantRef } from '@recur/kernel';
import { add, compare, type Money, money, subtract, type TaxAmount } from '@recur/money';
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
  /**
   * The invoice's tax this credit note gives back, per rate, in proportion to its amount
   * (docs/api/refunds.md#tax-carried-back); empty for an untaxed invoice. Included in `amount`.
   */
  taxAmounts: TaxAmount[];
  reason: RefundReason;
  paymentId: string;
  createdAt: Date;
}

/** `whole` × `numerator` / `denominator`, rounded half up in minor units (exact integers). */
function proportion(whole: number, numerator: number, denominator: number): number {
  if (denominator === 0) return 0;
  // floor((2·whole·numerator + denominator) / (2·denominator)): half up, negatives included.
  const dividend = BigInt(whole) * BigInt(numerator) * 2n + BigInt(denominator);
  const divisor = 2n * BigInt(denominator);
  const quotient = dividend / divisor;
  return Number(dividend % divisor !== 0n && (dividend < 0n) !== (divisor < 0n) ? quotient - 1n : quotient);
}

/**
 * The tax a credit of the invoice's amounts from `creditedBefore` to `creditedAfter` (cumulative,
 * minor units, at most the total) carries back, per rate of the invoice. Each rate's share of a
 * cumulative credit C is round_half_up(rate's tax × C / total), and a credit note takes the
 * difference between its C after and before: the parts telescope, so no cent appears or
 * disappears and credit notes adding up to the total give back exactly the invoice's tax.
 */
export function taxCarriedBack(invoice: Pick<Invoice, 'total' | 'totalTaxAmounts'>, creditedBefore: number, creditedAfter: number): TaxAmount[] {
  const total = invoice.total.amountMinor;
  return invoice.totalTaxAmounts.map((tax) => ({
    taxRate: tax.taxRate,
    taxableAmount: money(proportion(tax.taxableAmount.amountMinor, creditedAfter, total) - proportion(tax.taxableAmount.amountMinor, creditedBefore, total), tax.amount.currency),
    amount: money(proportion(tax.amount.amountMinor, creditedAfter, total) - proportion(tax.amount.amountMinor, creditedBefore, total), tax.amount.currency),
  }));
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
    taxAmounts: taxCarriedBack(invoice, invoice.amountRefunded.amountMinor, invoice.amountRefunded.amountMinor + refund.amount.amountMinor),
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
