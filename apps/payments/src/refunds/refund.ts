import { randomUUID } from 'node:crypto';
import { failedPrecondition, invalidArgument, isDomainError, newId, type TenantRef } from '@recur/kernel';
import { compare, money, type Money, subtract, sum } from '@recur/money';
import { REFUND_REASONS, type RefundReason, UNAPPLIED_PAYMENT_REFUND_REASON } from '@recur/vocabulary';
import type { Payment } from '../payments/payment';
import type { RefundFinal, RefundResult } from '../providers/payment-provider';

/**
 * Where a refund is: `pending` (kept; the provider has not accepted it yet), `processing` (the
 * provider accepted it; its final status comes by callback or status check), `succeeded` (the
 * provider completed it: the credit note follows), `failed` (refused or failed at the provider:
 * no credit note, the invoice stays paid). Only pending and processing move, and only once.
 */
export type RefundStatus = 'pending' | 'processing' | 'succeeded' | 'failed';

/**
 * `invoice`: a refund of a paid invoice, which ends in a credit note. `unapplied_payment`: the
 * automatic return of a payment its invoice refused (voided, or paid by other means): the invoice
 * never took the money, so no credit note. `customer_credit`: a final invoice's credit (the unused
 * time of a cancellation with `refund: true`) paid back through the period invoice's payment: the
 * final invoice already credits it, so no credit note; its money counts against that payment as a
 * refund of the invoice does (docs/api/subscriptions.md#refunding-the-credit).
 */
export type RefundKind = 'invoice' | 'unapplied_payment' | 'customer_credit';

/** The kinds that give back part of what the invoice's payment paid: together they never exceed it. */
export const REFUNDS_OF_PAID_INVOICE: readonly RefundKind[] = ['invoice', 'customer_credit'];

/** A refund (full or partial) of a paid invoice, or the return of an unapplied payment, at the payment's provider. */
export interface Refund {
  /** `cn_…`: the credit note invoicing issues takes the same id; `re_…` for a return. */
  id: string;
  kind: RefundKind;
  tenant: TenantRef;
  invoiceId: string;
  paymentId: string;
  amount: Money;
  reason: RefundReason | typeof UNAPPLIED_PAYMENT_REFUND_REASON;
  providerRefundId: string;
  status: RefundStatus;
  failureCode: string | null;
  failureMessage: string | null;
  requestId: string;
  createdAt: Date;
  recordedAt: Date | null;
  /** A `customer_credit` refund's final invoice, whose reserved credit it pays back; null for other kinds. */
  creditInvoiceId: string | null;
}

/** The invoice as a refund needs it (read from invoicing). */
export interface RefundableInvoice {
  id: string;
  status: string;
  billingReason: string;
  /** Undefined from an invoicing release that records only full refunds (see `refundAmount`). */
  amountRefunded?: Money;
  /** The invoice's total and what credit notes that moved no money credited (docs/api/credit-notes.md); undefined from a release without them. */
  total?: Money;
  amountCredited?: Money;
}

export function checkRefundReason(reason: string): RefundReason {
  if (!(REFUND_REASONS as readonly string[]).includes(reason)) throw invalidArgument('reason', `reason must be one of ${REFUND_REASONS.join(', ')}`);
  return reason as RefundReason;
}

/** Only a paid invoice, and not a wallet's top-up, is refunded; anything else answers its specific code (409). */
export function assertRefundable(invoice: RefundableInvoice): void {
  if (invoice.status === 'paid' && invoice.billingReason === 'top_up') {
    // Its money is in a wallet now (perhaps spent): giving it back at the provider would leave the balance it bought.
    throw failedPrecondition('invoice_top_up', `Invoice '${invoice.id}' paid a wallet top-up; its money is in the wallet and is not refunded.`);
  }
  if (invoice.status === 'paid') return;
  const code = invoice.status === 'open' || invoice.status === 'failed' ? 'invoice_not_paid' : `invoice_${invoice.status}`;
  throw failedPrecondition(code, `Invoice '${invoice.id}' is ${invoice.status}; only a paid invoice can be refunded.`);
}

/** Refunds of this invoice (done or under way) already give back all that was paid: another is refused. */
export const alreadyRefunded = (invoiceId: string) =>
  failedPrecondition('invoice_refunded', `Invoice '${invoiceId}' is refunded in full, or refunds of all of it are under way.`);

/**
 * How much a new refund of an invoice gives back: `requested` (minor units), or when absent all
 * that `paid` (the settling payment's or wallet debit's amount) still holds once the invoice's
 * refunds that are not failed (`earlier`, succeeded or under way) are counted. Refunds of one
 * invoice are decided one at a time under its lock, so their sum never exceeds what was paid.
 * An invoicing release that records only full refunds (its invoice has no `amountRefunded`) is
 * never asked to record less than all of it: such a refund is refused (409) until its upgrade.
 */
export function refundAmount(invoice: RefundableInvoice, paid: Money, earlier: readonly Refund[], requested: bigint | undefined): Money {
  const refunding = sum(paid.currency, earlier.map((refund) => refund.amount));
  const ofPaid = subtract(paid, refunding);
  // Refunds and credits together never exceed the total (docs/api/credit-notes.md#never-more-than-the-total).
  const ofTotal = invoice.total && invoice.amountCredited ? subtract(subtract(invoice.total, invoice.amountCredited), refunding) : ofPaid;
  const remaining = compare(ofTotal, ofPaid) < 0 ? ofTotal : ofPaid;
  if (remaining.amountMinor <= 0) throw alreadyRefunded(invoice.id);
  if (requested !== undefined) {
    if (requested <= 0n) throw invalidArgument('amount', 'amount must be a positive integer in minor units of the invoice’s currency');
    if (requested > BigInt(remaining.amountMinor)) {
      throw invalidArgument('amount', `amount must be at most ${remaining.amountMinor}: what was paid (${paid.amountMinor} ${paid.currency}) and is neither refunded nor being refunded`, 'amount_too_large');
    }
  }
  const amount = requested === undefined ? remaining : money(Number(requested), paid.currency);
  if (invoice.amountRefunded === undefined && compare(amount, paid) !== 0) {
    // Not UNAVAILABLE: the gateway would retry that until its deadline; this answer is at once.
    throw failedPrecondition('partial_refund_unavailable', 'Partial refunds are not available until the invoicing service is upgraded; a full refund is, and a partial one shortly.');
  }
  return amount;
}

/** A new refund of `amount` of the payment that settled the invoice (a provider's payment or a wallet debit). */
export function newRefund(tenant: TenantRef, invoiceId: string, payment: Pick<Payment, 'id' | 'amount'>, reason: RefundReason, requestId: string, now: Date, amount: Money = payment.amount): Refund {
  return {
    id: newId('cn'),
    kind: 'invoice',
    tenant,
    invoiceId,
    paymentId: payment.id,
    amount,
    reason,
    providerRefundId: randomUUID(),
    status: 'pending',
    failureCode: null,
    failureMessage: null,
    requestId,
    createdAt: now,
    recordedAt: null,
    creditInvoiceId: null,
  };
}

/**
 * A refund of `amount` of a final invoice's credit, which invoicing reserved out of the customer's
 * balance, through the payment (or wallet debit) that settled the period's invoice. Its request id
 * is the final invoice's: one such refund per final invoice, whoever asks again.
 */
export function newCreditRefund(tenant: TenantRef, periodInvoiceId: string, paid: Pick<Payment, 'id' | 'amount'>, creditInvoiceId: string, now: Date, amount: Money, byWallet: boolean): Refund {
  const refund = newRefund(tenant, periodInvoiceId, paid, 'requested_by_customer', creditRefundRequestId(creditInvoiceId), now, amount);
  return { ...refund, id: newId('re'), kind: 'customer_credit', creditInvoiceId, status: byWallet ? 'succeeded' : 'pending' };
}

export const creditRefundRequestId = (creditInvoiceId: string): string => `credit:${creditInvoiceId}`;

/**
 * What of `credit` a refund through the period's invoice can give back: the credit, at most what
 * `refundAmount` leaves of the invoice's payment (0 when it is refunded already, or was never paid).
 */
export function creditRefundable(invoice: RefundableInvoice, paid: Money, earlier: readonly Refund[], credit: Money): Money {
  try {
    assertRefundable(invoice);
    const left = refundAmount(invoice, paid, earlier, undefined);
    return compare(left, credit) < 0 ? left : credit;
  } catch (error) {
    if (isDomainError(error) && error.kind === 'failed_precondition') return money(0, credit.currency);
    throw error;
  }
}

/** The automatic return of `payment`, which succeeded for an invoice that no longer owed it. */
export function newUnappliedReturn(payment: Pick<Payment, 'id' | 'tenant' | 'invoiceId' | 'amount'>, now: Date): Refund {
  return {
    ...newRefund(payment.tenant, payment.invoiceId, payment, 'duplicate', `return:${payment.id}`, now),
    id: newId('re'),
    kind: 'unapplied_payment',
    reason: UNAPPLIED_PAYMENT_REFUND_REASON,
  };
}

/**
 * A refund of an invoice a wallet paid: the wallet is credited back in the transaction that keeps
 * the refund, so it is `succeeded` from the start (no provider; its `providerRefundId` is never
 * sent anywhere) and only its credit note is left to record. `paymentId` is the debit's id, the
 * `payment` invoicing recorded when the wallet paid.
 */
export function newWalletRefund(tenant: TenantRef, invoiceId: string, debit: Pick<Payment, 'id' | 'amount'>, reason: RefundReason, requestId: string, now: Date, amount: Money): Refund {
  return { ...newRefund(tenant, invoiceId, debit, reason, requestId, now, amount), status: 'succeeded' };
}

/**
 * What the provider answered to the request: carried out (the sandbox), accepted (pawaPay: still
 * to complete), or refused (the invoice stays paid and may be refunded again).
 */
export function withProviderResult(refund: Refund, result: RefundResult): Refund {
  if ('rejected' in result) return { ...refund, status: 'failed', failureCode: result.rejected.code, failureMessage: result.rejected.message };
  return { ...refund, status: 'completed' in result ? 'succeeded' : 'processing' };
}

/** A refund still moves (its provider has not said the last word). */
export const isUnsettled = (refund: Refund): boolean => refund.status === 'pending' || refund.status === 'processing';

/**
 * The provider's final word (callback or status check): completed → succeeded, failed → failed.
 * A refund already settled is left as it is (null): the first final word wins, once.
 */
export function settleRefund(refund: Refund, final: RefundFinal): Refund | null {
  if (!isUnsettled(refund)) return null;
  return final.status === 'completed'
    ? { ...refund, status: 'succeeded' }
    : { ...refund, status: 'failed', failureCode: final.code, failureMessage: final.message };
}
