import { fromInt64 } from '@recur/money';
import type { Invoice, InvoiceLine } from '../gen/recur/invoicing/v1/invoice_pb';
import { moneyFromMessage } from '../money';

/**
 * Value sets and bounds of invoices, shared by the gateway's request validation and the
 * invoicing service's rules. One definition each.
 */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'failed', 'void', 'refunded'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/** What `status` may say when an invoice is created: a draft, or finalized at once. */
export const INVOICE_CREATE_STATUSES = ['draft', 'open'] as const;
/** Why an invoice was raised; `data.source` of invoice.created says the same. */
export const INVOICE_BILLING_REASONS = ['manual', 'subscription_create', 'subscription_cycle', 'subscription_update', 'top_up', 'sales_link'] as const;
export const INVOICE_DESCRIPTION_MAX = 500;
export const INVOICE_LINES_MAX = 100;
/** A one-off invoice is due this many days after its creation unless `due_date` says otherwise. */
export const INVOICE_DEFAULT_DUE_DAYS = 30;
/** YYYY-MM-DD; the calendar check (no 2026-02-30) is `isCalendarDate`. */
export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** True for a real calendar day written YYYY-MM-DD (2024-02-29 yes, 2026-02-30 no). */
export function isCalendarDate(value: string): boolean {
  if (!DATE_PATTERN.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

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
  currency: string;
  description: string | null;
  lines: InvoiceLineJson[];
  subtotal: number;
  discount: number;
  total: number;
  amount_due: number;
  amount_paid: number;
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
    currency: invoice.currency,
    description: invoice.description || null,
    lines: invoice.lines.map(presentInvoiceLine),
    subtotal: moneyFromMessage(invoice.subtotal, 'subtotal').amountMinor,
    discount: moneyFromMessage(invoice.discount, 'discount').amountMinor,
    total: moneyFromMessage(invoice.total, 'total').amountMinor,
    amount_due: moneyFromMessage(invoice.amountDue, 'amount_due').amountMinor,
    amount_paid: moneyFromMessage(invoice.amountPaid, 'amount_paid').amountMinor,
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
