import { fromInt64 } from '@recur/money';
import type { Invoice, InvoiceLine } from '../gen/recur/invoicing/v1/invoice_pb';
import { moneyFromMessage } from '../money';
import { presentTaxAmount, type TaxAmountJson } from './tax-rate';
import { type AddressJson, presentAddress, type TaxIdJson } from './customer';

/** A period in unix seconds, or null when the invoice or line bills no period. */
export interface PeriodJson {
  start: number;
  end: number;
}

export interface InvoiceLineJson {
  id: string;
  object: 'line_item';
  kind: string;
  description: string;
  quantity: number;
  amount: number;
  period: PeriodJson | null;
  /** The tax on the line, one entry per rate; empty when untaxed (docs/api/invoices.md#tax-and-rounding). */
  tax_amounts: TaxAmountJson[];
}

/**
 * The public JSON of an invoice: what `/v1/invoices` answers and what invoice.* events carry
 * in `data.object`. Amounts are minor units of `currency`; times unix seconds.
 */
export interface InvoiceJson {
  id: string;
  object: 'invoice';
  livemode: boolean;
  number: string | null;
  status: string;
  customer: string;
  customer_name: string;
  customer_email: string;
  subscription: string | null;
  billing_reason: string;
  collection_method: string;
  currency: string;
  description: string | null;
  lines: InvoiceLineJson[];
  subtotal: number;
  discount: number;
  /** The tax per rate: the sums of the lines' tax amounts. */
  total_tax_amounts: TaxAmountJson[];
  /** All tax, inclusive and exclusive. */
  tax: number;
  total: number;
  total_excluding_tax: number;
  /** The customer's tax status when raised: none, exempt, or reverse (reverse charge, no tax). */
  customer_tax_exempt: string;
  /**
   * The buyer as recorded at finalization, frozen after (docs/api/invoices.md#customer-details):
   * null on drafts and on invoices finalized before Recur recorded them; customer_tax_ids is then
   * null too, and [] on an issued invoice whose customer had none.
   */
  customer_address: AddressJson | null;
  customer_phone: string | null;
  customer_tax_ids: TaxIdJson[] | null;
  amount_due: number;
  /** The customer's balance before and after this invoice consumed credit at finalization (negative: credit): amount_due = total − (ending_balance − starting_balance). */
  starting_balance: number;
  ending_balance: number;
  amount_paid: number;
  /** Refunded of amount_paid so far (credit notes of refunds); the invoice is `refunded` once it is all of it. */
  amount_refunded: number;
  /** Credited by credit notes that moved no money (docs/api/credit-notes.md). */
  amount_credited: number;
  due_date: string;
  period: PeriodJson | null;
  payment_url: string | null;
  metadata: Record<string, string>;
  created: number;
  finalized_at: number | null;
  paid_at: number | null;
  voided_at: number | null;
}

const period = (start: bigint, end: bigint): PeriodJson | null => (start === 0n && end === 0n ? null : { start: Number(start), end: Number(end) });
const optionalTime = (seconds: bigint): number | null => (seconds === 0n ? null : Number(seconds));

export function presentInvoiceLine(line: InvoiceLine): InvoiceLineJson {
  return {
    id: line.id,
    object: 'line_item',
    kind: line.kind,
    description: line.description,
    quantity: fromInt64(line.quantity, 'quantity'),
    amount: moneyFromMessage(line.amount).amountMinor,
    period: period(line.periodStart, line.periodEnd),
    tax_amounts: line.taxAmounts.map(presentTaxAmount),
  };
}

export function presentInvoice(invoice: Invoice): InvoiceJson {
  return {
    id: invoice.id,
    object: 'invoice',
    livemode: invoice.livemode,
    number: invoice.number || null,
    status: invoice.status,
    customer: invoice.customerId,
    customer_name: invoice.customerName,
    customer_email: invoice.customerEmail,
    subscription: invoice.subscriptionId || null,
    billing_reason: invoice.billingReason,
    collection_method: invoice.collectionMethod || 'send_invoice',
    currency: invoice.currency,
    description: invoice.description || null,
    lines: invoice.lines.map(presentInvoiceLine),
    subtotal: moneyFromMessage(invoice.subtotal, 'subtotal').amountMinor,
    discount: moneyFromMessage(invoice.discount, 'discount').amountMinor,
    total_tax_amounts: invoice.totalTaxAmounts.map(presentTaxAmount),
    // An invoice from a producer older than tax carries none: its tax is 0.
    tax: invoice.tax === undefined ? 0 : moneyFromMessage(invoice.tax, 'tax').amountMinor,
    total: moneyFromMessage(invoice.total, 'total').amountMinor,
    total_excluding_tax: moneyFromMessage(invoice.totalExcludingTax ?? invoice.total, 'total_excluding_tax').amountMinor,
    customer_tax_exempt: invoice.customerTaxExempt || 'none',
    customer_address: invoice.customerDetails?.address ? presentAddress(invoice.customerDetails.address) : null,
    customer_phone: invoice.customerDetails?.phone || null,
    customer_tax_ids: invoice.customerDetails ? invoice.customerDetails.taxIds.map(({ type, value }) => ({ type, value })) : null,
    amount_due: moneyFromMessage(invoice.amountDue, 'amount_due').amountMinor,
    // Unset from an invoicing release before customer balances: no credit was consumed.
    starting_balance: invoice.startingBalance ? moneyFromMessage(invoice.startingBalance, 'starting_balance').amountMinor : 0,
    ending_balance: invoice.endingBalance ? moneyFromMessage(invoice.endingBalance, 'ending_balance').amountMinor : 0,
    amount_paid: moneyFromMessage(invoice.amountPaid, 'amount_paid').amountMinor,
    // Unset from an invoicing release before partial refunds: all of it or nothing was refunded.
    amount_refunded: invoice.amountRefunded
      ? moneyFromMessage(invoice.amountRefunded, 'amount_refunded').amountMinor
      : invoice.status === 'refunded' ? moneyFromMessage(invoice.amountPaid, 'amount_paid').amountMinor : 0,
    // Unset from an invoicing release before credit notes without money: none.
    amount_credited: invoice.amountCredited ? moneyFromMessage(invoice.amountCredited, 'amount_credited').amountMinor : 0,
    due_date: invoice.dueDate,
    period: period(invoice.periodStart, invoice.periodEnd),
    payment_url: invoice.paymentUrl || null,
    metadata: { ...invoice.metadata },
    created: Number(invoice.created),
    finalized_at: optionalTime(invoice.finalizedAt),
    paid_at: optionalTime(invoice.paidAt),
    voided_at: optionalTime(invoice.voidedAt),
  };
}
