/**
 * Value sets and bounds of invoices, shared by the gateway's request validation and the
 * invoicing service's rules. One definition each.
 */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'failed', 'void', 'refunded'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/** What `status` may say when an invoice is created: a draft, or finalized at once. */
export const INVOICE_CREATE_STATUSES = ['draft', 'open'] as const;
/** Why an invoice was raised; `data.source` of invoice.created says the same. */
export const INVOICE_BILLING_REASONS = ['manual', 'subscription_create', 'subscription_cycle', 'subscription_update', 'top_up', 'sales_link', 'subscription_final'] as const;
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

/** Why a paid invoice is refunded (`POST /v1/refunds` `reason`), Stripe's three. */
/**
 * How an invoice is collected, as Stripe names it: `send_invoice` (the payment link is sent;
 * the payer pays at a page) or `charge_automatically` (at finalization Recur pushes a payment
 * prompt to the customer's default payment method, after the wallet if it covers the invoice).
 */
export const COLLECTION_METHODS = ['send_invoice', 'charge_automatically'] as const;
export type CollectionMethod = (typeof COLLECTION_METHODS)[number];
export const DEFAULT_COLLECTION_METHOD: CollectionMethod = 'send_invoice';
export const isCollectionMethod = (value: string): value is CollectionMethod => (COLLECTION_METHODS as readonly string[]).includes(value);

export const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];
/**
 * The reason of an automatic refund: a payment that succeeded for an invoice that no longer owed
 * it (voided, or paid by other means) goes back to its payer. Never a reason a caller gives.
 */
export const UNAPPLIED_PAYMENT_REFUND_REASON = 'unapplied_payment';
export const REFUND_REASONS_SHOWN = [...REFUND_REASONS, UNAPPLIED_PAYMENT_REFUND_REASON] as const;
/** Why a credit note that moves no money was issued (`POST /v1/credit-notes`), as Stripe names them. */
export const CREDIT_NOTE_REASONS = ['duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory'] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];
/** Every reason a credit note may carry: a refund's or a credit's. */
export const CREDIT_NOTE_REASONS_SHOWN = [...REFUND_REASONS, 'order_change', 'product_unsatisfactory'] as const;

/** A dunning schedule (`PUT /v1/dunning-schedule`, `DUNNING_SCHEDULE_DAYS`): 1 to 10 reminders, each 1 to 90 days after the failure, strictly increasing. */
export const DUNNING_REMINDERS_MAX = 10;
export const DUNNING_DAY_MAX = 90;
/** Automatic retries of a failed charge (`payment_retries` of the dunning schedule): 0 to 5 of them, each 1 to 30 days after the first failure, strictly increasing. */
export const PAYMENT_RETRIES_MAX = 5;
export const PAYMENT_RETRY_DAY_MAX = 30;
