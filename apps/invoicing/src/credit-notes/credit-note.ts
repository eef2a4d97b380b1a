import { CREDIT_NOTE_REASONS, type CreditNoteReason, REFUND_REASONS, type RefundReason } from '@recur/vocabulary';
import { checkMetadata, failedPrecondition, hasPrefix, invalidArgument, type Metadata, type TenantRef } from '@recur/kernel';
import { add, compare, type Money, money, subtract, type TaxAmount } from '@recur/money';
import { assertMove, type Invoice, type InvoiceChange, NOTHING_COLLECTED } from '../invoices/invoice';

/**
 * Where a credit note's amount went: `refund` (money back at the provider or to a wallet),
 * `amount_due` (an open or failed invoice owes less), `customer_balance` (a paid invoice's credit,
 * which the customer's next invoices consume): docs/api/credit-notes.md.
 */
export type CreditedTo = 'refund' | 'amount_due' | 'customer_balance';

/** The longest memo a credit note prints. */
export const CREDIT_NOTE_MEMO_MAX = 500;

/** The document of a refund, in full or in part, of a paid invoice, or of a credit that moved no money. */
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
  reason: RefundReason | CreditNoteReason;
  /** The refunded payment or wallet debit; '' for a credit that moved no money. */
  paymentId: string;
  creditedTo: CreditedTo;
  memo: string | null;
  /** The integrator's key-value data (a credit note without money; `{}` for a refund's). */
  metadata: Metadata;
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
  // What was paid and not refunded, and never more than the total less every credit (docs/api/credit-notes.md#never-more-than-the-total).
  const paidLeft = subtract(invoice.amountPaid, invoice.amountRefunded);
  const totalLeft = creditableOfTotal(invoice);
  const refundable = compare(paidLeft, totalLeft) < 0 ? paidLeft : totalLeft;
  if (refund.amount.currency !== invoice.currency || refund.amount.amountMinor <= 0 || compare(refund.amount, refundable) > 0) {
    throw invalidArgument('amount', `a refund is of at most what was paid and not yet refunded (${refundable.amountMinor} ${invoice.currency})`, 'amount_mismatch');
  }
  const creditNote = creditNoteOf(invoice, {
    id: refund.creditNoteId, number, amount: refund.amount, reason: checkRefundReason(refund.reason), paymentId: refund.paymentId, creditedTo: 'refund', memo: null, metadata: {}, createdAt: now,
  });
  // amount_paid keeps what was paid: the credit notes record what went back.
  const amountRefunded = add(invoice.amountRefunded, refund.amount);
  const inFull = compare(amountRefunded, invoice.amountPaid) === 0;
  const refunded: Invoice = { ...invoice, amountRefunded, status: inFull ? 'refunded' : invoice.status, updatedAt: now };
  const events: InvoiceChange['events'] = [{ kind: 'credit_note_issued', invoice: refunded, creditNote }];
  if (inFull) events.push({ kind: 'refunded', invoice: refunded, creditNote });
  return { invoice: refunded, creditNote, events };
}

/**
 * A credit note of `invoice` for `note.amount`: the invoice's customer and numbers, and the tax
 * carried back from where the invoice's earlier credit notes left it (taxCarriedBack).
 */
function creditNoteOf(invoice: Invoice, note: Omit<CreditNote, 'tenant' | 'invoiceId' | 'invoiceNumber' | 'customer' | 'taxAmounts'>): CreditNote {
  const from = creditedSoFar(invoice);
  return {
    ...note,
    tenant: invoice.tenant,
    invoiceId: invoice.id,
    invoiceNumber: invoice.number ?? '',
    customer: invoice.customer,
    taxAmounts: taxCarriedBack(invoice, from, from + note.amount.amountMinor),
  };
}

/** All that credit notes of the invoice credited so far, refunds' and credits' together: the point the next one's tax starts from. */
const creditedSoFar = (invoice: Pick<Invoice, 'amountRefunded' | 'amountCredited'>): number => invoice.amountRefunded.amountMinor + invoice.amountCredited.amountMinor;

/** The total less what credit notes (refunds' and credits') already gave: what any new one may take at most. */
function creditableOfTotal(invoice: Pick<Invoice, 'total' | 'amountRefunded' | 'amountCredited' | 'currency'>, refundsUnderWay: Money | null = null): Money {
  // Refunds still in flight at the provider have no credit note yet but will: they count already.
  const refunds = Math.max(invoice.amountRefunded.amountMinor, refundsUnderWay?.amountMinor ?? 0);
  return money(Math.max(0, invoice.total.amountMinor - refunds - invoice.amountCredited.amountMinor), invoice.currency);
}

export function checkCreditNoteReason(reason: string): CreditNoteReason {
  if (!(CREDIT_NOTE_REASONS as readonly string[]).includes(reason)) throw invalidArgument('reason', `reason must be one of ${CREDIT_NOTE_REASONS.join(', ')}`);
  return reason as CreditNoteReason;
}

export function checkCreditNoteMemo(memo: string): string | null {
  const trimmed = memo.trim();
  if (trimmed.length > CREDIT_NOTE_MEMO_MAX) throw invalidArgument('memo', `memo must be at most ${CREDIT_NOTE_MEMO_MAX} characters`);
  return trimmed.length === 0 ? null : trimmed;
}

/** A credit that moves no money, as asked (`POST /v1/credit-notes`). */
export interface CreditRequest {
  creditNoteId: string;
  /** Minor units; undefined: all that can be credited. */
  amount: bigint | undefined;
  reason: string;
  memo: string;
  metadata: Metadata;
  /** The invoice's refunds not failed, as payments counts them under the invoice's lock (succeeded ones included); null: none. */
  refundsUnderWay: Money | null;
}

/**
 * What may still be credited without moving money: of an open or failed invoice, what it still
 * owes (`amount_due`, never more than the total less every credit note); of a paid one, the total
 * less what refunds (done or under way) and earlier credits gave (docs/api/credit-notes.md).
 */
export function creditableAmount(invoice: Invoice, refundsUnderWay: Money | null): Money {
  const ofTotal = creditableOfTotal(invoice, refundsUnderWay);
  if (invoice.status === 'paid') return ofTotal;
  return compare(invoice.amountDue, ofTotal) < 0 ? invoice.amountDue : ofTotal;
}

/**
 * A credit note that moves no money (docs/api/credit-notes.md), as Stripe's: on an open or failed
 * invoice it lowers `amount_due` (a credit that leaves nothing due pays the invoice, `invoice.paid`
 * with no payment, as a 0-due invoice is paid at finalization); on a paid invoice its amount goes
 * to the customer balance (the caller records the ledger entry). Tax is carried back exactly as
 * refunds' credit notes carry it, from the same cumulative point (taxCarriedBack).
 */
export function creditInvoice(invoice: Invoice, request: CreditRequest, number: string, now: Date): InvoiceChange & { creditNote: CreditNote } {
  assertMove(invoice, 'credit');
  const reason = checkCreditNoteReason(request.reason);
  const memo = checkCreditNoteMemo(request.memo);
  const metadata = checkMetadata(request.metadata);
  if (request.refundsUnderWay && request.refundsUnderWay.currency !== invoice.currency) {
    throw invalidArgument('refunds_under_way', `refunds_under_way must be in ${invoice.currency}`);
  }
  const creditable = creditableAmount(invoice, request.refundsUnderWay);
  if (creditable.amountMinor <= 0) {
    throw failedPrecondition('nothing_to_credit', `Invoice '${invoice.id}' has nothing left to credit: refunds and credit notes already give back all of it${invoice.status === 'paid' ? '' : ', or it owes nothing'}.`);
  }
  if (request.amount !== undefined) {
    if (request.amount <= 0n) throw invalidArgument('amount', 'amount must be a positive integer in minor units of the invoice’s currency');
    if (request.amount > BigInt(creditable.amountMinor)) {
      throw invalidArgument('amount', `amount must be at most ${creditable.amountMinor} ${invoice.currency}: what the invoice ${invoice.status === 'paid' ? 'totals' : 'still owes'} less refunds and credit notes`, 'amount_too_large');
    }
  }
  const amount = request.amount === undefined ? creditable : money(Number(request.amount), invoice.currency);
  const creditedTo: CreditedTo = invoice.status === 'paid' ? 'customer_balance' : 'amount_due';
  const creditNote = creditNoteOf(invoice, { id: request.creditNoteId, number, amount, reason, paymentId: '', creditedTo, memo, metadata, createdAt: now });
  const credited: Invoice = { ...invoice, amountCredited: add(invoice.amountCredited, amount), updatedAt: now };
  if (creditedTo === 'customer_balance') return { invoice: credited, creditNote, events: [{ kind: 'credit_note_issued', invoice: credited, creditNote }] };
  const owing: Invoice = { ...credited, amountDue: subtract(invoice.amountDue, amount) };
  if (owing.amountDue.amountMinor > 0) return { invoice: owing, creditNote, events: [{ kind: 'credit_note_issued', invoice: owing, creditNote }] };
  // Nothing left to collect: paid as a 0-due invoice is at finalization (no payment).
  const paid: Invoice = { ...owing, status: 'paid', paidAt: now };
  return { invoice: paid, creditNote, events: [{ kind: 'credit_note_issued', invoice: paid, creditNote }, { kind: 'paid', invoice: paid, paymentId: NOTHING_COLLECTED }] };
}
