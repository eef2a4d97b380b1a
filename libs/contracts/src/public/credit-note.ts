import { fromInt64 } from '@recur/money';
import type { CreditNote } from '../gen/recur/invoicing/v1/credit_note_pb';
import { moneyFromMessage } from '../money';
import { presentTaxAmount, type TaxAmountJson } from './tax-rate';

/**
 * The public JSON of a credit note, the document of a full refund: what `/v1/refunds` answers
 * and `invoice.refunded` carries. Its id (`cn_…`) is also the refund's.
 */
export interface CreditNoteJson {
  id: string;
  object: 'credit_note';
  livemode: boolean;
  number: string;
  invoice: string;
  invoice_number: string;
  customer: string;
  customer_name: string;
  customer_email: string;
  amount: number;
  currency: string;
  /** The invoice's tax this credit note gives back (included in amount), per rate and in all. */
  total_tax_amounts: TaxAmountJson[];
  tax: number;
  reason: string;
  /** The refunded payment; empty (`""`, the type stays a string for /v1/refunds' clients) for a credit note that moved no money (docs/api/credit-notes.md). */
  payment: string;
  /** `refund`, `amount_due` (an open invoice owes less) or `customer_balance` (docs/api/credit-notes.md). */
  credited_to: CreditedTo;
  memo: string | null;
  metadata: Record<string, string>;
  created: number;
}

export const CREDITED_TO = ['refund', 'amount_due', 'customer_balance'] as const;
export type CreditedTo = (typeof CREDITED_TO)[number];

export function presentCreditNote(note: CreditNote): CreditNoteJson {
  const amount = moneyFromMessage(note.amount);
  return {
    id: note.id,
    object: 'credit_note',
    livemode: note.livemode,
    number: note.number,
    invoice: note.invoiceId,
    invoice_number: note.invoiceNumber,
    customer: note.customerId,
    customer_name: note.customerName,
    customer_email: note.customerEmail,
    amount: amount.amountMinor,
    currency: amount.currency,
    // From an older invoicing release: no tax carried back was recorded.
    total_tax_amounts: note.taxAmounts.map(presentTaxAmount),
    tax: note.tax ? moneyFromMessage(note.tax, 'tax').amountMinor : 0,
    reason: note.reason,
    payment: note.paymentId,
    // From an older invoicing release: every credit note was a refund's.
    credited_to: (CREDITED_TO as readonly string[]).includes(note.creditedTo) ? note.creditedTo as CreditedTo : 'refund',
    memo: note.memo === '' ? null : note.memo,
    metadata: { ...note.metadata },
    created: fromInt64(note.created, 'created'),
  };
}
