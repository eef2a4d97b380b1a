import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, DomainError, invalidArgument, type Page, type TenantRef } from '@recur/kernel';
import { sandboxOutcome, type SandboxOutcome } from '@recur/vocabulary';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';
import { ProviderAdapters } from '../providers/provider-adapters.service';
import type { ReceivedCallback } from '../providers/payment-provider';
import {
  assertPayable,
  checkPhoneNumber,
  checkProvider,
  newPayment,
  type Outcome,
  type PayableInvoice,
  type Payment,
  paymentNotFound,
  providerPaymentIdFor,
  rejectedAtStart,
  settle,
} from './payment';
import { PaymentsRepository } from './payments.repository';

type Tx = Prisma.TransactionClient;

export interface InitiationFields {
  phoneNumber: string;
  provider: string;
}

export type CallbackOutcome = 'settled' | 'already_settled' | 'pending' | 'unknown_payment';

/** What a payer page shows: the payment, and what Approve does for its number on the sandbox. */
export interface PayerPage {
  payment: Payment;
  sandbox: boolean;
  expectedOutcome: SandboxOutcome | '';
}

/** The payer's choice on the sandbox payer page. */
export const SANDBOX_DECISIONS = ['approve', 'decline'] as const;

/**
 * Payment use cases. Initiation runs in the command's transaction (`tx`) with the invoice
 * locked, so one invoice never has two pending payments; settlement locks the payment row, so
 * a payment settles once whoever reports it (callbacks, the janitor, the sandbox payer page).
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly adapters: ProviderAdapters,
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  /**
   * Starts paying `invoice` (read from invoicing by the caller), or answers the invoice's
   * pending payment: a repeat never starts a second charge. The adapter is the tenant's mode's.
   */
  initiate(tx: Tx, tenant: TenantRef, invoice: PayableInvoice, fields: InitiationFields): Promise<Payment> {
    return this.begin(tx, tenant, invoice, fields, undefined);
  }

  /**
   * Starts collecting `invoice` with nobody at a page: a push to the stored phone (auto
   * recharge). `key` (the automatic top-up's id) fixes the provider's id, so a retry of a try
   * whose answer or commit was lost asks the provider for the same deposit, never a second one.
   */
  initiatePush(tx: Tx, tenant: TenantRef, invoice: PayableInvoice, fields: InitiationFields, key: string): Promise<Payment> {
    return this.begin(tx, tenant, invoice, fields, providerPaymentIdFor(key));
  }

  private async begin(tx: Tx, tenant: TenantRef, invoice: PayableInvoice, fields: InitiationFields, pushId: string | undefined): Promise<Payment> {
    checkPhoneNumber(fields.phoneNumber, checkProvider(fields.provider));
    await this.payments.lockInvoice(tx, tenant, invoice.id);
    const pending = await this.payments.findPending(tx, tenant, invoice.id);
    if (pending) return pending;
    assertPayable(invoice);
    const now = this.now();
    const payment = newPayment(tenant, { invoice, ...fields, providerPaymentId: pushId }, now);
    // The payment (with the provider's id we chose) is part of the same commit as the session:
    // if the provider call fails, nothing is kept and a page session's retry starts afresh with a
    // new id; a push's retry repeats its fixed id, which the provider de-duplicates.
    const adapter = this.adapters.forPayment(payment);
    const started = pushId === undefined ? await adapter.start(payment, this.returnUrl(payment)) : await adapter.push(payment, this.returnUrl(payment));
    const change = 'rejected' in started
      ? rejectedAtStart(payment, started.rejected.code, started.rejected.message, now)
      : { payment: { ...payment, redirectUrl: started.redirectUrl }, events: [] };
    await this.payments.insert(tx, change, new Date(now.getTime() + this.config.statusCheckAfterMs));
    return change.payment;
  }

  get(tenant: TenantRef, id: string): Promise<Payment> {
    return this.payments.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, invoiceId: string | undefined): Promise<{ payments: Payment[]; total: number }> {
    return this.payments.list(tenant, page, invoiceId);
  }

  async payerPage(token: string): Promise<PayerPage> {
    const payment = await this.byToken(token);
    const sandbox = payment.adapter === 'sandbox';
    return { payment, sandbox, expectedOutcome: sandbox ? sandboxOutcome(payment.phoneNumber) : '' };
  }

  /**
   * The sandbox payer's choice, as the simulator answers it: Decline fails the payment, Approve
   * does what the phone number says (docs/sandbox.md#magic-numbers). A live payment's token is
   * unknown here: only the real provider decides a live payment.
   */
  async decideSandbox(token: string, decision: string): Promise<Payment> {
    if (!(SANDBOX_DECISIONS as readonly string[]).includes(decision)) throw invalidArgument('decision', `decision must be one of ${SANDBOX_DECISIONS.join(', ')}`);
    const payment = await this.byToken(token);
    if (payment.adapter !== 'sandbox') throw new DomainError('not_found', 'resource_missing', 'No such sandbox payment page.', 'token');
    const outcome: Outcome | null = decision === 'decline'
      ? { status: 'failed', code: 'payment_declined', message: 'The payer declined the payment.' }
      : ({ succeed: { status: 'succeeded' }, fail: { status: 'failed', code: 'insufficient_funds', message: "The payer's wallet does not hold enough funds." }, pending: null } as const)[sandboxOutcome(payment.phoneNumber)];
    if (!outcome) return payment;
    return (await this.settleById(payment.id, outcome)).payment;
  }

  /** Authenticates a provider's callback and settles the payment it names (once). */
  async handleCallback(provider: string, callback: ReceivedCallback): Promise<{ outcome: CallbackOutcome; paymentId: string }> {
    const adapter = this.adapters.byName(provider);
    const parsed = adapter.parseCallback(callback);
    const payment = await this.payments.findByProviderPaymentId(parsed.providerPaymentId);
    // A callback may only settle a payment of its own adapter: never a sandbox payment.
    if (!payment || payment.adapter !== adapter.name) return { outcome: 'unknown_payment', paymentId: '' };
    if (!parsed.outcome) return { outcome: 'pending', paymentId: payment.id };
    const { changed } = await this.settleById(payment.id, parsed.outcome);
    return { outcome: changed ? 'settled' : 'already_settled', paymentId: payment.id };
  }

  /** Settles one payment under its row lock; a payment already settled is left untouched. */
  async settleById(id: string, outcome: Outcome): Promise<{ payment: Payment; changed: boolean }> {
    return this.prisma.$transaction(async (tx) => {
      const payment = await this.payments.getForUpdate(tx, id);
      if (!payment) throw paymentNotFound(id);
      const change = settle(payment, outcome, this.now());
      await this.payments.saveSettlement(tx, change);
      return { payment: change.payment, changed: change.events.length > 0 };
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /** Where the provider sends the payer back: Recur's return page for the payment. */
  private returnUrl(payment: Payment): string {
    return `${this.config.pagesUrl}/pay/return/${payment.pageToken}`;
  }

  private async byToken(token: string): Promise<Payment> {
    const payment = /^[A-Za-z0-9_-]{43}$/.test(token) ? await this.payments.findByPageToken(token) : undefined;
    if (!payment) throw new DomainError('not_found', 'resource_missing', 'No such payment page.', 'token');
    return payment;
  }
}
