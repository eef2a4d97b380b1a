import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { DomainError, failedPrecondition, invalidArgument, newId, type TenantRef } from '@recur/kernel';
import { equals, type Money, toDecimalString } from '@recur/money';
import { isPaymentProvider, PAYMENT_PROVIDER_CODES, PAYMENT_PROVIDERS, type PaymentProvider, type PaymentStatus, SANDBOX_FAILURES, type SandboxOutcome } from '@recur/vocabulary';

/** The adapter a payment runs on. Chosen by the tenant's mode (adapterFor), never by a caller. */
export type AdapterName = 'sandbox' | 'pawapay';

/** A payment attempt as the domain sees it; persistence and transport map to and from this. */
export interface Payment {
  id: string;
  tenant: TenantRef;
  invoiceId: string;
  invoiceNumber: string;
  status: PaymentStatus;
  amount: Money;
  /** E.164: `+260971000001`. */
  phoneNumber: string;
  provider: PaymentProvider;
  adapter: AdapterName;
  /** `page`: the payer approves at a page; `push`: a prompt pushed to a stored number, nobody at a page (auto recharge, automatic collection). */
  channel: PaymentChannel;
  /** The provider's id of the payment: pawaPay's depositId (a UUIDv4 we choose before calling it). */
  providerPaymentId: string;
  /** The unguessable token of the payer pages (32 random bytes, base64url). */
  pageToken: string;
  redirectUrl: string;
  failureCode: string | null;
  failureMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  settledAt: Date | null;
  /** Set when the payment succeeded for an invoice that no longer owed it: the code invoicing answered (`invoice_void`, …). */
  unappliedReason: string | null;
  /** The automatic refund (`re_…`) returning an unapplied payment. */
  refundId: string | null;
  /** The invoice's customer; '' on payments made before it was kept. */
  customerId: string;
  /** Where the payer ticked consent to save the number (`payment_page`, `checkout`); null: nothing is saved. */
  saveMethodSource: PageConsentSource | null;
}

/** The pages where a payer may tick "save this number": the consent sources a payment may carry. */
export const PAGE_CONSENT_SOURCES = ['payment_page', 'checkout'] as const;
export type PageConsentSource = (typeof PAGE_CONSENT_SOURCES)[number];

/** '' (nothing to save) or a page's consent source; anything else is refused before money moves. */
export function checkSaveMethodSource(value: string): PageConsentSource | null {
  if (value === '') return null;
  if (!(PAGE_CONSENT_SOURCES as readonly string[]).includes(value)) throw invalidArgument('save_method_source', `save_method_source must be one of ${PAGE_CONSENT_SOURCES.join(', ')}`);
  return value as PageConsentSource;
}

export type PaymentEvent =
  | { kind: 'succeeded'; payment: Payment }
  | { kind: 'failed'; payment: Payment }
  | { kind: 'canceled'; payment: Payment }
  | { kind: 'unapplied'; payment: Payment };

export interface PaymentChange {
  payment: Payment;
  events: PaymentEvent[];
}

export type PaymentChannel = 'page' | 'push';

/** Two worlds, enforced here: a sandbox tenant's payments run on the simulator, a live tenant's on pawaPay. */
export const adapterFor = (tenant: TenantRef): AdapterName => (tenant.livemode ? 'pawapay' : 'sandbox');

/** What an invoice must look like to be paid: the fields payments reads from invoicing. */
export interface PayableInvoice {
  id: string;
  number: string;
  status: string;
  amountDue: Money;
  /** The invoice's customer (who a saved payment method belongs to); absent where a caller does not need it. */
  customerId?: string;
}

/** Only open or failed invoices are collected; each other status answers its own code (409 at the gateway). */
export function assertPayable(invoice: PayableInvoice): void {
  if (invoice.status === 'open' || invoice.status === 'failed') return;
  const code = invoice.status === 'void' ? 'invoice_void' : `invoice_${invoice.status}`;
  throw failedPrecondition(code, `Invoice '${invoice.id}' is ${invoice.status}; only open or failed invoices can be paid.`);
}

/**
 * A phone number in international format (`+` and the country code), valid for its country by
 * libphonenumber's metadata, and in the country its provider serves. Answers E.164.
 */
export function checkPhoneNumber(value: string, provider: PaymentProvider): string {
  const trimmed = value.trim();
  if (!trimmed.startsWith('+')) throw invalidArgument('phone_number', 'phone_number must be in international format, starting with + and the country code');
  const parsed = parsePhoneNumberFromString(trimmed);
  if (!parsed || !parsed.isValid()) throw invalidArgument('phone_number', `phone_number '${value}' is not a valid phone number`);
  const country = PAYMENT_PROVIDERS[provider];
  if (parsed.country !== country) {
    throw invalidArgument('phone_number', `phone_number is not a ${country} number; provider ${provider} serves ${country} only`, 'phone_number_provider_mismatch');
  }
  return parsed.number;
}

export function checkProvider(value: string): PaymentProvider {
  if (!isPaymentProvider(value)) throw invalidArgument('provider', `provider must be one of ${PAYMENT_PROVIDER_CODES.join(', ')}`);
  return value;
}

export interface NewPaymentFields {
  invoice: PayableInvoice;
  phoneNumber: string;
  provider: string;
  /** The provider's id when it must be the same on every try (a push: providerPaymentIdFor); random otherwise. */
  providerPaymentId?: string;
  /** Save the number as the customer's payment method once the payment succeeds (the payer ticked consent on this page). */
  saveMethodSource?: PageConsentSource | null;
}

/**
 * The provider's id (pawaPay's depositId) of the payment started for `key` (an automatic
 * top-up's id): a UUID in version 4's shape drawn from a hash of the key instead of from
 * randomness, so every try of one top-up — after a lost answer, after a crash before the commit —
 * asks pawaPay for the same deposit and pawaPay ignores the repeats (DUPLICATE_IGNORED).
 */
export function providerPaymentIdFor(key: string): string {
  const bytes = createHash('sha256').update(`recur-deposit:${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A new pending payment of the invoice's amount due; the redirect address comes from its adapter. */
export function newPayment(tenant: TenantRef, fields: NewPaymentFields, now: Date): Payment {
  const provider = checkProvider(fields.provider);
  const phoneNumber = checkPhoneNumber(fields.phoneNumber, provider);
  assertPayable(fields.invoice);
  if (fields.invoice.amountDue.amountMinor <= 0) throw failedPrecondition('invoice_nothing_due', `Invoice '${fields.invoice.id}' has nothing due.`);
  return {
    id: newId('pay'),
    tenant,
    invoiceId: fields.invoice.id,
    invoiceNumber: fields.invoice.number,
    status: 'pending',
    amount: fields.invoice.amountDue,
    phoneNumber,
    provider,
    adapter: adapterFor(tenant),
    channel: fields.providerPaymentId === undefined ? 'page' : 'push',
    providerPaymentId: fields.providerPaymentId ?? randomUUID(),
    pageToken: randomBytes(32).toString('base64url'),
    redirectUrl: '',
    failureCode: null,
    failureMessage: null,
    createdAt: now,
    updatedAt: now,
    settledAt: null,
    unappliedReason: null,
    refundId: null,
    customerId: fields.invoice.customerId ?? '',
    saveMethodSource: fields.saveMethodSource ?? null,
  };
}

/** What a provider (or the sandbox payer) says became of a payment. */
/**
 * What became of a payment at its provider. A success may say what the provider collected
 * (`collected`; pawaPay's callbacks and statuses do), which must be the payment's own amount.
 */
export type Outcome = { status: 'succeeded'; collected?: Money } | { status: 'failed'; code: string; message: string };

/**
 * Settles a pending payment once: a payment already settled is left as it is, whatever the
 * second report says (a duplicate callback, a callback racing the janitor), and records nothing.
 */
export function settle(payment: Payment, outcome: Outcome, now: Date): PaymentChange {
  if (payment.status !== 'pending') return { payment, events: [] };
  if (outcome.status === 'succeeded' && outcome.collected && !equals(outcome.collected, payment.amount)) {
    // Never mark an invoice paid by a different sum: the payment fails and the money collected is for an operator to return.
    return settle(payment, { status: 'failed', code: 'amount_mismatch', message: `The provider collected ${toDecimalString(outcome.collected)} ${outcome.collected.currency.toUpperCase()}, not ${toDecimalString(payment.amount)} ${payment.amount.currency.toUpperCase()}.` }, now);
  }
  const settled: Payment =
    outcome.status === 'succeeded'
      ? { ...payment, status: 'succeeded', settledAt: now, updatedAt: now }
      : { ...payment, status: 'failed', failureCode: outcome.code, failureMessage: outcome.message, settledAt: now, updatedAt: now };
  return { payment: settled, events: [{ kind: outcome.status, payment: settled }] };
}

/**
 * Cancels a pending payment whose invoice no longer owes it (`reason`: the invoice's refusal
 * code, `invoice_void` or `invoice_paid`). Only where its provider can be stopped: the sandbox
 * simulator refuses Approve from then on. A live deposit already pushed to a phone cannot be called
 * back at pawaPay; it stays pending, and should it succeed it is returned (unapplied).
 */
export function cancel(payment: Payment, reason: string, now: Date): PaymentChange {
  if (payment.status !== 'pending') return { payment, events: [] };
  const canceled: Payment = {
    ...payment,
    status: 'canceled',
    failureCode: reason,
    failureMessage: reason === 'invoice_void' ? 'The invoice was voided before the payment was made.' : 'The invoice was paid by other means before this payment was made.',
    settledAt: now,
    updatedAt: now,
  };
  return { payment: canceled, events: [{ kind: 'canceled', payment: canceled }] };
}

/** The adapters whose pending payments can be called back (cancel). */
export const cancelable = (payment: Payment): boolean => payment.adapter === 'sandbox';

/**
 * The invoicing refusals that mean "this invoice no longer owes money" (voided, paid by another
 * payment or a wallet, refunded): a payment that succeeded anyway is unapplied and returned.
 */
export const NOT_OWED_CODES: readonly string[] = ['invoice_void', 'invoice_paid', 'invoice_refunded'];

/** A succeeded payment its invoice refused (`reason`), to be returned by the refund `refundId`. */
export function unapplied(payment: Payment, reason: string, refundId: string, now: Date): PaymentChange {
  const marked: Payment = { ...payment, unappliedReason: reason, refundId, updatedAt: now };
  return { payment: marked, events: [{ kind: 'unapplied', payment: marked }] };
}

/** A payment whose page session ended without the payer paying (the janitor's verdict). */
export const EXPIRED = { status: 'failed', code: 'payment_expired', message: 'The payer did not complete the payment before the session ended.' } as const satisfies Outcome;

/** The provider refused to start the payment: it fails at once, as a failed attempt. */
export const rejectedAtStart = (payment: Payment, code: string, message: string, now: Date): PaymentChange => settle(payment, { status: 'failed', code, message }, now);

export const paymentNotFound = (id: string) => new DomainError('not_found', 'resource_missing', `No such payment: '${id}'`, 'id');

/** What Approve does for a magic number (docs/sandbox.md#magic-numbers); null: the payment stays pending. */
export function sandboxApproval(outcome: SandboxOutcome): Outcome | null {
  if (outcome === 'succeed') return { status: 'succeeded' };
  if (outcome === 'pending') return null;
  return { status: 'failed', ...SANDBOX_FAILURES[outcome] };
}
