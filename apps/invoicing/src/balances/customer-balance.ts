import { failedPrecondition, invalidArgument, type TenantRef } from '@recur/kernel';
import { AMOUNT_MAX, checkCurrencyCode, type Money, money } from '@recur/money';

/**
 * A customer's balance and its ledger (docs/api/customer-balance.md). Signed as Stripe signs it:
 * negative is credit the customer holds, which the next invoices consume. One currency per
 * customer, as Stripe's customer has one; a balance holds credit only (never a debt).
 */
export type BalanceTransactionType = 'adjustment' | 'applied_to_invoice' | 'credit_note' | 'refund' | 'refund_reversal';

export interface BalanceTransaction {
  id: string;
  tenant: TenantRef;
  customerId: string;
  type: BalanceTransactionType;
  /** The change; negative credits the customer. */
  amount: Money;
  endingBalance: Money;
  description: string | null;
  invoiceId: string | null;
  creditNoteId: string | null;
  createdAt: Date;
}

export const BALANCE_DESCRIPTION_MAX = 500;

/**
 * The balance after a manual adjustment of `amount` to `balance` (null: the customer never had
 * one). Refused: 0 or too large an amount, a currency other than the balance's while it is not
 * zero, and a result above zero (a balance holds credit only: to charge a customer, invoice them).
 */
export function adjustedBalance(balance: Money | null, amount: { amountMinor: number; currency: string }): Money {
  const currency = checkCurrencyCode(amount.currency);
  if (!Number.isInteger(amount.amountMinor) || amount.amountMinor === 0 || Math.abs(amount.amountMinor) > AMOUNT_MAX) {
    throw invalidArgument('amount', `amount must be a non-zero integer of minor units, at most ${AMOUNT_MAX} either way`);
  }
  if (balance && balance.amountMinor !== 0 && balance.currency !== currency) {
    throw invalidArgument('currency', `The customer's balance is in ${balance.currency}; an adjustment must be in ${balance.currency} too.`, 'currency_mismatch');
  }
  const ending = (balance && balance.currency === currency ? balance.amountMinor : 0) + amount.amountMinor;
  if (ending > 0) {
    throw invalidArgument('amount', `A balance holds credit only: this adjustment would leave the customer owing ${ending} ${currency}; at most ${amount.amountMinor - ending} can be added.`, 'amount_too_large');
  }
  return money(ending, currency);
}

/**
 * The balance after a credit note of a paid invoice credits `amount` (positive, minor units) to
 * it: always more credit. Refused (409 `balance_currency_mismatch`) while the customer holds a
 * non-zero balance in another currency, as one customer has one balance currency.
 */
export function creditedBalance(balance: Money | null, amount: Money): Money {
  if (balance && balance.amountMinor !== 0 && balance.currency !== amount.currency) {
    throw failedPrecondition('balance_currency_mismatch', `The customer's balance is in ${balance.currency}; a credit note in ${amount.currency} cannot be credited to it.`);
  }
  return money((balance && balance.currency === amount.currency ? balance.amountMinor : 0) - amount.amountMinor, amount.currency);
}

export function checkBalanceDescription(description: string): string | null {
  const trimmed = description.trim();
  if (trimmed.length > BALANCE_DESCRIPTION_MAX) throw invalidArgument('description', `description must be at most ${BALANCE_DESCRIPTION_MAX} characters`);
  return trimmed.length === 0 ? null : trimmed;
}

/**
 * How much of a final invoice's credit (`credited`, positive) a refund to the payer takes out of
 * the balance (docs/api/subscriptions.md#refunding-the-credit): at most `max` (what the period's
 * invoice still holds to refund), the credit, and the credit the balance still holds (invoices
 * finalized since may have consumed it; a balance in another currency holds none of it).
 */
export function creditToReserve(balance: Money | null, credited: Money, max: Money): number {
  if (max.currency !== credited.currency) throw invalidArgument('max_amount', `max_amount must be in ${credited.currency}, the invoice's currency`);
  const held = balance && balance.currency === credited.currency ? -balance.amountMinor : 0;
  return Math.max(0, Math.min(max.amountMinor, credited.amountMinor, held));
}

/**
 * What goes back to the balance when the refund of a reserved credit settles: the reservation less
 * what was refunded, less what earlier settlements gave back already (0 when nothing is left).
 * A settlement may come more than once (a retry; a partial refund, then its failure): in all the
 * balance gets back the reservation less the last amount refunded, never more than was reserved.
 */
export function creditToReturn(reserved: number, refunded: number, returnedBefore: number): number {
  return Math.max(0, Math.max(0, reserved - Math.max(0, refunded)) - returnedBefore);
}
