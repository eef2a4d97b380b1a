import { COLLECTION_METHODS, type CollectionMethod, DEFAULT_COLLECTION_METHOD, INVOICE_CREATE_STATUSES, isCollectionMethod, isRetryablePaymentFailure, INVOICE_DEFAULT_DUE_DAYS, INVOICE_DESCRIPTION_MAX, INVOICE_LINES_MAX, type InvoiceStatus, isCalendarDate, QUANTITY_MAX } from '@recur/vocabulary';
import { checkMetadata, DomainError, failedPrecondition, invalidArgument, type Metadata, newId, type TenantRef } from '@recur/kernel';
import type { CreditNote } from '../credit-notes/credit-note';
import { add, AMOUNT_MAX, checkCurrencyCode, type Money, money, sum, type TaxAmount, taxInvoice, type TaxRateTerms, zero } from '@recur/money';
import type { TaxExemptStatus } from '@recur/vocabulary';
import type { TaxCustomer } from '../tax-rates/tax-rate';

/** Who is billed, as the invoice keeps it: taken at creation and again at finalization. */
export interface BilledCustomer {
  id: string;
  name: string;
  email: string;
  /** Where the customer is and their tax status, for the tax rules (docs/api/tax-rates.md#which-rate-applies); absent: untaxed. */
  tax?: TaxCustomer;
  /** Address, phone and tax ids as subscription has them now; finalization records them (absent: none known). */
  details?: CustomerDetails;
}

/**
 * The buyer an issued invoice names besides name and e-mail, recorded at finalization and never
 * changed after (docs/api/invoices.md#customer-details): Stripe's customer_address,
 * customer_phone and customer_tax_ids.
 */
export interface CustomerDetails {
  address: CustomerAddress | null;
  phone: string | null;
  taxIds: { type: string; value: string }[];
}

export interface CustomerAddress {
  line1: string | null;
  line2: string | null;
  city: string | null;
  region: string | null;
  postalCode: string | null;
  country: string | null;
}

/** What finalization records when the customer service told nothing more (an older subscription): no address, phone or tax id. */
export const NO_CUSTOMER_DETAILS: CustomerDetails = { address: null, phone: null, taxIds: [] };

export interface InvoiceLine {
  id: string;
  kind: string;
  description: string;
  quantity: number;
  amount: Money;
  periodStart: Date | null;
  periodEnd: Date | null;
  /** The line's tax, one entry per rate (empty: untaxed). */
  taxAmounts: TaxAmount[];
}

/** An invoice as the domain sees it; persistence and transport map to and from this. */
export interface Invoice {
  id: string;
  tenant: TenantRef;
  number: string | null;
  status: InvoiceStatus;
  customer: BilledCustomer;
  subscriptionId: string | null;
  billingReason: string;
  collectionMethod: CollectionMethod;
  currency: string;
  description: string | null;
  lines: InvoiceLine[];
  subtotal: Money;
  discount: Money;
  /** All tax, inclusive and exclusive; `totalTaxAmounts` has it per rate. */
  tax: Money;
  totalTaxAmounts: TaxAmount[];
  /** subtotal − discount + exclusive tax. */
  total: Money;
  amountDue: Money;
  amountPaid: Money;
  /** What refunds gave back of `amountPaid` (their credit notes' sum); `refunded` once it is all of it. */
  amountRefunded: Money;
  /** What credit notes that moved no money credited (docs/api/credit-notes.md); refunds and credits together never exceed `total`. */
  amountCredited: Money;
  /** The day payment is due, YYYY-MM-DD (a calendar day, no time zone). */
  dueDate: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  paymentUrl: string | null;
  /** The payment page's credential, the last segment of `paymentUrl`; null for drafts. */
  paymentToken: string | null;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  finalizedAt: Date | null;
  paidAt: Date | null;
  voidedAt: Date | null;
  /**
   * Payment attempts, as Stripe counts them (`attempt_count`): the first failed payment of any
   * kind is 1, then each failed automatic retry adds one; 0 until a payment failed.
   */
  paymentAttemptCount: number;
  /** The automatic retries planned at the first failure of a `charge_automatically` charge (attempts 2, 3, …), in the invoice's own time. */
  paymentRetryAt: Date[];
  /** The customer's tax status when raised; `reverse` prints the reverse-charge wording. */
  customerTaxExempt: TaxExemptStatus;
  /**
   * The customer's balance before and after the invoice consumed it at finalization (negative:
   * credit; zero on drafts and when there was none): docs/api/customer-balance.md#invoices-consume-credit.
   */
  startingBalance: Money;
  endingBalance: Money;
  /** Recorded at finalization, then frozen; null on drafts (and on invoices finalized before it was recorded). */
  customerDetails: CustomerDetails | null;
  /**
   * A final invoice raised with `refundCredit`: the period's invoice whose payment its credit (a
   * total below 0) is refunded to, by payments (docs/api/subscriptions.md#refunding-the-credit).
   */
  creditRefundInvoiceId: string | null;
}

/**
 * What happened to an invoice, in the domain's words. The edge translates each into its
 * integration event and, where the specification defines one, its public webhook event.
 */
export type InvoiceEvent =
  | { kind: 'created'; invoice: Invoice }
  | { kind: 'finalized'; invoice: Invoice }
  | { kind: 'voided'; invoice: Invoice }
  | { kind: 'paid'; invoice: Invoice; paymentId: string }
  | { kind: 'payment_failed'; invoice: Invoice; paymentId: string; failureCode: string; dunningScheduleDays: number[]; attemptCount: number; paymentRetryAt: Date[]; failedAt: Date | null }
  | { kind: 'credit_note_issued'; invoice: Invoice; creditNote: CreditNote }
  | { kind: 'refunded'; invoice: Invoice; creditNote: CreditNote }
  | { kind: 'dunning_reminder'; invoice: Invoice; reminderNumber: number; reminderCount: number; at: Date };

/** An invoice after a change, with the events the change recorded; the use case saves both at once. */
export interface InvoiceChange {
  invoice: Invoice;
  events: InvoiceEvent[];
}

/**
 * The state machine: each move and the statuses it may start from (docs/api/invoices.md).
 * `pay` and `fail` are the settlements the payments service reports; `refund` lands with
 * refunds and credit notes.
 */
export const INVOICE_MOVES = {
  finalize: ['draft'],
  void: ['draft', 'open', 'failed'],
  pay: ['open', 'failed'],
  fail: ['open'],
  refund: ['paid'],
  /** A credit note that moves no money (docs/api/credit-notes.md): an open or failed invoice owes less, a paid one credits the balance. */
  credit: ['open', 'failed', 'paid'],
  /** E-mailing the invoice (at finalization, on resend, as a dunning reminder): once it has a number and is not void. */
  send: ['open', 'failed', 'paid', 'refunded'],
  /** A dunning reminder goes out only while the failed payment is still unpaid. */
  remind: ['failed'],
} as const satisfies Record<string, readonly InvoiceStatus[]>;
export type InvoiceMove = keyof typeof INVOICE_MOVES;

/** The specific code a forbidden move answers, by move and current status (409 at the gateway). */
function refusal(move: InvoiceMove, invoice: Invoice): DomainError {
  if (move === 'send') {
    const code = invoice.status === 'draft' ? 'invoice_not_finalized' : 'invoice_void';
    return failedPrecondition(code, `Invoice '${invoice.id}' is ${invoice.status}; only a finalized invoice that is not void can be e-mailed.`);
  }
  const code =
    move === 'finalize' ? 'invoice_not_draft'
      : move === 'credit' && invoice.status === 'draft' ? 'invoice_not_finalized'
      : move === 'credit' && invoice.status === 'void' ? 'invoice_void'
      : move === 'refund' && (invoice.status === 'open' || invoice.status === 'failed') ? 'invoice_not_paid'
      : (move === 'pay' || move === 'refund') && invoice.status === 'void' ? 'invoice_void'
      : invoice.status === 'void' ? 'invoice_already_void'
        : invoice.status === 'paid' ? 'invoice_paid'
          : invoice.status === 'refunded' ? 'invoice_refunded'
            : `invoice_${invoice.status}`;
  return failedPrecondition(code, `Invoice '${invoice.id}' is ${invoice.status}; it cannot ${move === 'void' ? 'be voided' : `${move}`}.`);
}

export function assertMove(invoice: Invoice, move: InvoiceMove): void {
  if (!(INVOICE_MOVES[move] as readonly string[]).includes(invoice.status)) throw refusal(move, invoice);
}

// ---- field rules ------------------------------------------------------------------------

function checkText(value: string, param: string): string {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw invalidArgument(param, `${param} must not be empty`);
  if (trimmed.length > INVOICE_DESCRIPTION_MAX) throw invalidArgument(param, `${param} must be at most ${INVOICE_DESCRIPTION_MAX} characters`);
  return trimmed;
}

/** A given amount: an integer from 0 to AMOUNT_MAX minor units of `currency`. */
function givenAmount(amountMinor: number, currency: string, param: string): Money {
  if (!Number.isInteger(amountMinor)) throw invalidArgument(param, `${param} must be an integer amount in minor units`);
  if (amountMinor < 0) throw invalidArgument(param, `${param} must not be negative`);
  if (amountMinor > AMOUNT_MAX) throw invalidArgument(param, `${param} must be at most ${AMOUNT_MAX}`);
  return money(amountMinor, currency);
}

function checkQuantity(quantity: number, param: string, minimum: number): number {
  if (!Number.isInteger(quantity) || quantity < minimum || quantity > QUANTITY_MAX) {
    throw invalidArgument(param, `${param} must be an integer from ${minimum} to ${QUANTITY_MAX}`);
  }
  return quantity;
}

/** The calendar day of `date` in UTC, YYYY-MM-DD. */
export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);
const addDays = (date: Date, days: number): Date => new Date(date.getTime() + days * 86_400_000);

function checkDueDate(dueDate: string | undefined, now: Date): string {
  if (dueDate === undefined || dueDate === '') return utcDay(addDays(now, INVOICE_DEFAULT_DUE_DAYS));
  if (!isCalendarDate(dueDate)) throw invalidArgument('due_date', 'due_date must be a calendar date written YYYY-MM-DD');
  if (dueDate < utcDay(now)) throw invalidArgument('due_date', 'due_date must not be in the past');
  return dueDate;
}

/** The rates the rules chose for an invoice's lines, in order (null: untaxed), and the customer's tax status. */
export interface InvoiceTaxing {
  customerTaxExempt: TaxExemptStatus;
  lineRates: (TaxRateTerms | null)[];
}

export const UNTAXED: InvoiceTaxing = { customerTaxExempt: 'none', lineRates: [] };

/**
 * An invoice's lines taxed and its figures (docs/api/invoices.md#tax-and-rounding): the same
 * function raises an invoice and answers the upcoming-invoice preview.
 */
export function taxedTotals<L extends Omit<InvoiceLine, 'taxAmounts'>>(currency: string, lines: L[], discount: Money, taxing: InvoiceTaxing, options: { negativeTotal?: boolean } = {}) {
  // The discount is spread over the charged (positive) lines, as taxInvoice spreads it; a final invoice's credits come after it.
  const charged = sum(currency, lines.map((line) => (line.amount.amountMinor > 0 ? line.amount : zero(currency))));
  if (discount.amountMinor < 0 || discount.amountMinor > charged.amountMinor) throw invalidArgument('discount', 'discount must be between 0 and the sum of the charged lines');
  const taxed = taxInvoice(currency, lines.map((line, index) => ({ amount: line.amount, taxRate: taxing.lineRates[index] ?? null })), discount);
  const { subtotal, total } = taxed;
  // Only a final invoice may credit more than it charges: its negative total becomes customer balance at finalization.
  if (total.amountMinor < 0 && !options.negativeTotal) throw invalidArgument('lines', 'an invoice total must not be negative');
  return {
    lines: lines.map((line, index) => ({ ...line, taxAmounts: taxed.lines[index].taxAmounts })),
    subtotal,
    discount,
    tax: taxed.tax,
    totalTaxAmounts: taxed.totalTaxAmounts,
    total,
    amountDue: total,
    amountPaid: zero(currency),
    amountRefunded: zero(currency),
    amountCredited: zero(currency),
    customerTaxExempt: taxing.customerTaxExempt,
    startingBalance: zero(currency),
    endingBalance: zero(currency),
  };
}

// ---- creation ---------------------------------------------------------------------------

export interface OneOffLineFields {
  description: string;
  amount: number;
  quantity?: number;
  /** The line's own rate (at most one), before the country and account-default rules. */
  taxRateIds?: string[];
}

export interface OneOffInvoiceFields {
  currency?: string;
  description?: string;
  /** One line of this amount, described by `description` (exclusive with `lines`). */
  amount?: number;
  lines?: OneOffLineFields[];
  dueDate?: string;
  /** `draft` (also when absent) or `open`; the use case finalizes an `open` one at once. */
  status?: string;
  metadata?: Metadata;
  /** `manual` (also when absent), `top_up` (a prepaid wallet's top-up, raised by payments) or `sales_link` (a one_time sales link's sale, raised by subscription). */
  billingReason?: string;
  /** `send_invoice` (also when absent) or `charge_automatically`. */
  collectionMethod?: string;
}

/** Validates a collection method: absent or empty → `send_invoice` (Stripe's default too). */
export function checkCollectionMethod(value: string | undefined): CollectionMethod {
  if (value === undefined || value === '') return DEFAULT_COLLECTION_METHOD;
  if (!isCollectionMethod(value)) throw invalidArgument('collection_method', `collection_method must be one of ${COLLECTION_METHODS.join(', ')}`);
  return value;
}

/** Why a one-off invoice is raised: by hand, to top up a prepaid wallet (docs/api/wallets.md), or for a one_time sales link's sale. */
export const ONE_OFF_BILLING_REASONS = ['manual', 'top_up', 'sales_link'] as const;

/** Validates the requested creation status: absent or `draft` → a draft; `open` → finalized at once. */
export function checkCreateStatus(status: string | undefined): 'draft' | 'open' {
  if (status === undefined || status === '') return 'draft';
  if (!(INVOICE_CREATE_STATUSES as readonly string[]).includes(status)) throw invalidArgument('status', `status must be one of ${INVOICE_CREATE_STATUSES.join(', ')}`);
  return status as 'draft' | 'open';
}

function oneOffLines(fields: OneOffInvoiceFields, currency: string): { lines: Omit<InvoiceLine, 'taxAmounts'>[]; description: string | null } {
  const hasLines = fields.lines !== undefined && fields.lines.length > 0;
  if (fields.amount !== undefined && hasLines) throw invalidArgument('lines', 'give either amount (one line) or lines, not both');
  const description = fields.description === undefined ? null : checkText(fields.description, 'description');
  if (fields.amount !== undefined) {
    if (description === null) throw invalidArgument('description', 'description is required with amount', 'parameter_missing');
    return { description, lines: [manualLine(description, givenAmount(fields.amount, currency, 'amount'), 1)] };
  }
  if (!hasLines) throw invalidArgument('amount', 'amount (with description) or lines is required', 'parameter_missing');
  if (fields.lines!.length > INVOICE_LINES_MAX) throw invalidArgument('lines', `an invoice holds at most ${INVOICE_LINES_MAX} lines`);
  const lines = fields.lines!.map((line, index) =>
    manualLine(
      checkText(line.description, `lines[${index}].description`),
      givenAmount(line.amount, currency, `lines[${index}].amount`),
      checkQuantity(line.quantity === undefined || line.quantity === 0 ? 1 : line.quantity, `lines[${index}].quantity`, 1),
    ),
  );
  return { description, lines };
}

const manualLine = (description: string, amount: Money, quantity: number): Omit<InvoiceLine, 'taxAmounts'> => ({
  id: newId('il'), kind: 'manual', description, quantity, amount, periodStart: null, periodEnd: null,
});

function checkOneOffBillingReason(reason: string | undefined): string {
  if (reason === undefined || reason === '') return 'manual';
  if (!(ONE_OFF_BILLING_REASONS as readonly string[]).includes(reason)) throw invalidArgument('billing_reason', `billing_reason must be one of ${ONE_OFF_BILLING_REASONS.join(', ')}`);
  return reason;
}

/** A new one-off (`manual`, a wallet's `top_up`, a one_time sale's `sales_link`) invoice, as a draft. */
export function createOneOffInvoice(tenant: TenantRef, customer: BilledCustomer, fields: OneOffInvoiceFields, now: Date, taxing: InvoiceTaxing = UNTAXED): InvoiceChange {
  const currency = checkCurrencyCode(fields.currency || 'usd');
  const oneOff = oneOffLines(fields, currency);
  const description = oneOff.description;
  const invoice: Invoice = {
    id: newId('in'),
    tenant,
    number: null,
    status: 'draft',
    customer,
    subscriptionId: null,
    billingReason: checkOneOffBillingReason(fields.billingReason),
    collectionMethod: checkCollectionMethod(fields.collectionMethod),
    currency,
    description,
    ...taxedTotals(currency, oneOff.lines, zero(currency), taxing),
    dueDate: checkDueDate(fields.dueDate, now),
    periodStart: null,
    periodEnd: null,
    paymentUrl: null,
    paymentToken: null,
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    finalizedAt: null,
    customerDetails: null,
    creditRefundInvoiceId: null,
    paidAt: null,
    voidedAt: null,
    paymentAttemptCount: 0,
    paymentRetryAt: [],
  };
  return { invoice, events: [{ kind: 'created', invoice }] };
}

export const SUBSCRIPTION_BILLING_REASONS = ['subscription_create', 'subscription_cycle', 'subscription_update', 'sales_link', 'subscription_final'] as const;

/**
 * A subscription's final invoice (docs/api/subscriptions.md#final-invoice): what its last
 * period left unbilled — metered usage in arrears and pending prorations — raised when it ends.
 * Its key is (subscription, `final`, period start), beside the period's own (subscription, period start).
 */
export const FINAL_BILLING_REASON = 'subscription_final';
export const isFinalInvoice = (invoice: { billingReason: string }): boolean => invoice.billingReason === FINAL_BILLING_REASON;
export const LINE_KINDS = ['plan', 'addon', 'usage', 'proration', 'manual'] as const;

export interface SubscriptionLineFields {
  kind: string;
  description: string;
  quantity: number;
  amount: Money;
  periodStart: Date | null;
  periodEnd: Date | null;
  /** The rates the line's plan or add-on names (at most one). */
  taxRateIds?: string[];
}

export interface SubscriptionInvoiceFields {
  subscriptionId: string;
  periodStart: Date;
  periodEnd: Date;
  currency: string;
  lines: SubscriptionLineFields[];
  discount: Money | undefined;
  billingReason: string;
  dueInDays: number;
  /** The subscription's: `send_invoice` (also when absent) or `charge_automatically`. */
  collectionMethod?: string;
  /** A final invoice's credit is refunded to the payer of the period's invoice (`refund: true` on a cancellation), not kept as balance. */
  refundCredit?: boolean;
}

/**
 * A renewal invoice of one subscription period, priced by the subscription service, as a
 * draft; the use case finalizes it at once. Line amounts may be negative (proration
 * credits), the total may not.
 */
export function createSubscriptionInvoice(tenant: TenantRef, customer: BilledCustomer, fields: SubscriptionInvoiceFields, now: Date, taxing: InvoiceTaxing = UNTAXED): InvoiceChange {
  const currency = checkCurrencyCode(fields.currency);
  if (!fields.subscriptionId.startsWith('sub_')) throw invalidArgument('subscription_id', 'subscription_id must be a subscription id (sub_…)');
  if (!(fields.periodEnd.getTime() > fields.periodStart.getTime())) throw invalidArgument('period_end', 'period_end must be after period_start');
  if (!(SUBSCRIPTION_BILLING_REASONS as readonly string[]).includes(fields.billingReason)) {
    throw invalidArgument('billing_reason', `billing_reason must be one of ${SUBSCRIPTION_BILLING_REASONS.join(', ')}`);
  }
  if (!Number.isInteger(fields.dueInDays) || fields.dueInDays < 0 || fields.dueInDays > 365) throw invalidArgument('due_in_days', 'due_in_days must be an integer from 0 to 365');
  if (fields.lines.length === 0) throw invalidArgument('lines', 'a renewal invoice needs at least one line');
  if (fields.lines.length > INVOICE_LINES_MAX) throw invalidArgument('lines', `an invoice holds at most ${INVOICE_LINES_MAX} lines`);
  const lines = fields.lines.map((line, index): Omit<InvoiceLine, 'taxAmounts'> => {
    if (line.amount.currency !== currency) throw invalidArgument(`lines[${index}].amount`, `every line must be in ${currency}`);
    if (!(LINE_KINDS as readonly string[]).includes(line.kind)) throw invalidArgument(`lines[${index}].kind`, `kind must be one of ${LINE_KINDS.join(', ')}`);
    return {
      id: newId('il'),
      kind: line.kind,
      description: checkText(line.description, `lines[${index}].description`),
      quantity: checkQuantity(line.quantity, `lines[${index}].quantity`, 0),
      amount: line.amount,
      periodStart: line.periodStart,
      periodEnd: line.periodEnd,
    };
  });
  const discount = fields.discount ?? zero(currency);
  if (discount.currency !== currency) throw invalidArgument('discount', `discount must be in ${currency}`);
  const invoice: Invoice = {
    id: newId('in'),
    tenant,
    number: null,
    status: 'draft',
    customer,
    subscriptionId: fields.subscriptionId,
    billingReason: fields.billingReason,
    collectionMethod: checkCollectionMethod(fields.collectionMethod),
    currency,
    description: null,
    ...taxedTotals(currency, lines, discount, taxing, { negativeTotal: fields.billingReason === FINAL_BILLING_REASON }),
    // A final invoice is raised when the subscription ends (period_end), not when its period began.
    dueDate: utcDay(addDays(fields.billingReason === FINAL_BILLING_REASON ? fields.periodEnd : fields.periodStart, fields.dueInDays)),
    periodStart: fields.periodStart,
    periodEnd: fields.periodEnd,
    paymentUrl: null,
    paymentToken: null,
    metadata: {},
    createdAt: now,
    updatedAt: now,
    finalizedAt: null,
    customerDetails: null,
    creditRefundInvoiceId: null,
    paidAt: null,
    voidedAt: null,
    paymentAttemptCount: 0,
    paymentRetryAt: [],
  };
  return { invoice, events: [{ kind: 'created', invoice }] };
}

// ---- moves ------------------------------------------------------------------------------

/** What finalization fixes: the next number, the customer as they are now, the payment page. */
export interface Finalization {
  number: string;
  customer: BilledCustomer;
  paymentUrl: string;
  paymentToken: string;
  /** The customer's balance as locked for this finalization (absent: none consumed). */
  balance?: Money;
}

/**
 * A draft becomes open: numbered, its customer snapshot refreshed, its payment page set. An
 * invoice with nothing due (a 100 % coupon, a credit carried forward, a 0 one-off or final invoice)
 * is paid at once, as Stripe does: `invoice.paid` with no payment, nothing to collect or dun.
 */
export function finalizeInvoice(invoice: Invoice, finalization: Finalization, now: Date): InvoiceChange {
  assertMove(invoice, 'finalize');
  const finalized: Invoice = {
    ...invoice,
    status: 'open',
    number: finalization.number,
    customer: finalization.customer,
    customerDetails: finalization.customer.details ?? NO_CUSTOMER_DETAILS,
    paymentUrl: finalization.paymentUrl,
    paymentToken: finalization.paymentToken,
    finalizedAt: now,
    updatedAt: now,
    ...consumeBalance(invoice.amountDue, finalization.balance),
  };
  if (finalized.amountDue.amountMinor > 0) return { invoice: finalized, events: [{ kind: 'finalized', invoice: finalized }] };
  const paid: Invoice = { ...finalized, status: 'paid', paidAt: now };
  return { invoice: paid, events: [{ kind: 'finalized', invoice: finalized }, { kind: 'paid', invoice: paid, paymentId: NOTHING_COLLECTED }] };
}

/**
 * What finalization takes of a customer's credit (a negative balance of the invoice's currency):
 * as much as the invoice owes and no more. A balance of another currency, or none, is left as it
 * is (docs/api/customer-balance.md#invoices-consume-credit).
 */
export function consumeBalance(amountDue: Money, balance: Money | undefined): Pick<Invoice, 'amountDue' | 'startingBalance' | 'endingBalance'> {
  if (amountDue.amountMinor < 0) return creditBalance(amountDue, balance);
  if (!balance || balance.currency !== amountDue.currency || balance.amountMinor >= 0) {
    return { amountDue, startingBalance: zero(amountDue.currency), endingBalance: zero(amountDue.currency) };
  }
  const applied = Math.min(-balance.amountMinor, amountDue.amountMinor);
  return { amountDue: money(amountDue.amountMinor - applied, amountDue.currency), startingBalance: balance, endingBalance: money(balance.amountMinor + applied, balance.currency) };
}

/**
 * A negative total (a final invoice that credits more than it charges) becomes customer
 * balance, as Stripe credits a negative invoice: nothing is due and the balance gains the
 * credit. A balance holding credit in another currency keeps it, and this credit stays on the
 * invoice (one currency per customer: docs/api/customer-balance.md#rules).
 */
function creditBalance(total: Money, balance: Money | undefined): Pick<Invoice, 'amountDue' | 'startingBalance' | 'endingBalance'> {
  const none = zero(total.currency);
  if (balance && balance.currency !== total.currency && balance.amountMinor !== 0) return { amountDue: none, startingBalance: none, endingBalance: none };
  const starting = balance && balance.currency === total.currency ? balance : none;
  return { amountDue: none, startingBalance: starting, endingBalance: money(starting.amountMinor + total.amountMinor, total.currency) };
}

/** The credit an invoice took from its customer's balance (0 when none; negative when a negative total credited it). */
export const appliedBalance = (invoice: Pick<Invoice, 'startingBalance' | 'endingBalance'>): number => invoice.endingBalance.amountMinor - invoice.startingBalance.amountMinor;

/** The payment id of an invoice paid with nothing due: none (`data.payment` is null). */
export const NOTHING_COLLECTED = '';

/** A draft, open or failed invoice is voided: it will not be collected (a draft keeps no number). */
export function voidInvoice(invoice: Invoice, now: Date): InvoiceChange {
  assertMove(invoice, 'void');
  const voided: Invoice = { ...invoice, status: 'void', amountDue: zero(invoice.currency), voidedAt: now, updatedAt: now };
  return { invoice: voided, events: [{ kind: 'voided', invoice: voided }] };
}

/** What a settled payment tells the invoice. */
export interface Settlement {
  paymentId: string;
  amount: Money;
  paidAt: Date;
}

/**
 * An open or failed invoice is paid by a payment of exactly its amount due: `amount_paid`
 * becomes the total, `amount_due` zero (`invoice.paid`). The failed move is where dunning starts.
 */
export function payInvoice(invoice: Invoice, settlement: Settlement, now: Date): InvoiceChange {
  assertMove(invoice, 'pay');
  if (settlement.amount.currency !== invoice.currency || settlement.amount.amountMinor !== invoice.amountDue.amountMinor) {
    throw invalidArgument('amount', `the payment's amount must equal the amount due (${invoice.amountDue.amountMinor} ${invoice.currency})`, 'amount_mismatch');
  }
  const paid: Invoice = {
    ...invoice,
    status: 'paid',
    amountPaid: add(invoice.amountPaid, settlement.amount),
    amountDue: zero(invoice.currency),
    paidAt: settlement.paidAt,
    updatedAt: now,
  };
  return { invoice: paid, events: [{ kind: 'paid', invoice: paid, paymentId: settlement.paymentId }] };
}

/** A failed payment as payments reports it: `automatic` when it was a push with nobody at a page. */
export interface PaymentFailure {
  paymentId: string;
  failureCode: string;
  automatic: boolean;
}



/**
 * A payment attempt failed at the provider: the invoice is failed (`invoice.payment_failed`).
 * For a `charge_automatically` invoice whose automatic charge failed for a reason that may pass
 * (isRetryablePaymentFailure), the first failure plans the retries (`retryTimes`, in the
 * invoice's own time) and each failure names the retries still to come; once none is left — or
 * the reason will not pass — dunning starts on `dunningScheduleDays` (the account's schedule as
 * it is now). A failed invoice fails again only by an automatic retry's failure.
 */
export function failInvoicePayment(invoice: Invoice, failure: PaymentFailure, dunningScheduleDays: number[], retryTimes: (firstFailure: Date) => Date[], ownNow: Date | null, now: Date): InvoiceChange {
  const automatic = failure.automatic && invoice.collectionMethod === 'charge_automatically';
  // Only an invoice whose first automatic failure planned retries is pushed again.
  const retryFailed = automatic && invoice.status === 'failed' && invoice.paymentRetryAt.length > 0;
  if (!retryFailed) assertMove(invoice, 'fail');
  const retryable = automatic && isRetryablePaymentFailure(failure.failureCode);
  const attemptCount = retryFailed ? invoice.paymentAttemptCount + 1 : 1;
  const paymentRetryAt = retryFailed ? invoice.paymentRetryAt : retryable ? retryTimes(ownNow ?? now) : [];
  const failed: Invoice = { ...invoice, status: 'failed', paymentAttemptCount: attemptCount, paymentRetryAt, updatedAt: now };
  // Attempt n's successor is planned retry n - 1 (the plan holds attempts 2, 3, …).
  const remaining = retryable ? paymentRetryAt.slice(attemptCount - 1) : [];
  return {
    invoice: failed,
    events: [{ kind: 'payment_failed', invoice: failed, paymentId: failure.paymentId, failureCode: failure.failureCode, dunningScheduleDays, attemptCount, paymentRetryAt: remaining, failedAt: ownNow }],
  };
}

/**
 * Reminder `reminderNumber` of `reminderCount` is due: a still-failed invoice records it
 * (`invoice.dunning_retry`; the use case queues its e-mail); any other invoice — paid
 * meanwhile, voided, refunded — records nothing, and `sent` is false.
 */
export function remindOfInvoice(invoice: Invoice, reminderNumber: number, reminderCount: number, now: Date): InvoiceChange & { sent: boolean } {
  if (!(INVOICE_MOVES.remind as readonly string[]).includes(invoice.status)) return { invoice, events: [], sent: false };
  return { invoice, events: [{ kind: 'dunning_reminder', invoice, reminderNumber, reminderCount, at: now }], sent: true };
}

/** Created and finalized in one command: the invoice is recorded as created in its final form. */
export function createdAndFinalized(finalized: InvoiceChange): InvoiceChange {
  // As raised: open (a 0 invoice's paid move follows in its own event).
  return { invoice: finalized.invoice, events: [{ kind: 'created', invoice: finalized.events[0].invoice }, ...finalized.events] };
}

/** The gapless number's text: `INV-000001` (six digits at least). */
export const formatInvoiceNumber = (sequence: number): string => `INV-${String(sequence).padStart(6, '0')}`;

/** A customer the invoice may bill: known in the tenant and not deleted. */
export type CustomerLookup = { found: BilledCustomer } | { missing: string } | { deleted: string };

export function billableCustomer(lookup: CustomerLookup): BilledCustomer {
  if ('missing' in lookup) throw invalidArgument('customer', `No such customer: '${lookup.missing}'`, 'resource_missing');
  if ('deleted' in lookup) throw new DomainError('failed_precondition', 'customer_deleted', `Customer '${lookup.deleted}' is deleted and cannot be invoiced.`, 'customer');
  return lookup.found;
}
