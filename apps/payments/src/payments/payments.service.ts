import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, DomainError, failedPrecondition, invalidArgument, isDomainError, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { type PaymentProvider, sandboxOutcome, type SandboxOutcome } from '@recur/vocabulary';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { InvoicingClient } from '../invoices/invoicing.client';
import { newUnappliedReturn } from '../refunds/refund';
import { REFUNDS_DUE_CHANNEL, RefundsRepository } from '../refunds/refunds.repository';
import { WalletsRepository } from '../wallets/wallets.repository';
import { newPaymentMethod } from '../payment-methods/payment-method';
import { PaymentMethodsRepository } from '../payment-methods/payment-methods.repository';
import { PaymentMethodsService } from '../payment-methods/payment-methods.service';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../payments-config';
import { ProviderAdapters } from '../providers/provider-adapters.service';
import { ProviderDirectory } from '../providers/provider-directory.service';
import type { ReceivedCallback } from '../providers/payment-provider';
import {
  assertPayable,
  cancel,
  cancelable,
  checkPhoneNumber,
  checkProvider,
  checkSaveMethodSource,
  newPayment,
  type Outcome,
  type PageConsentSource,
  type PayableInvoice,
  type Payment,
  paymentNotFound,
  providerPaymentIdFor,
  rejectedAtStart,
  sandboxApproval,
  settle,
  unapplied,
} from './payment';
import { PaymentsRepository } from './payments.repository';

type Tx = Prisma.TransactionClient;

export interface InitiationFields {
  phoneNumber: string;
  /** '' when the request named none: predicted from the phone number (ProviderDirectory.resolve). */
  provider: string;
  /** '' or absent: nothing is saved; `payment_page` / `checkout`: the payer ticked consent there (saved on success). */
  saveMethodSource?: string;
}

/** What an automatic retry did: pushed (the payment), or nothing, and why. */
export type CollectionRetry = { outcome: 'pushed'; payment: Payment } | { outcome: 'not_owed'; reason: string } | { outcome: 'no_payment_method' };

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
 * Payment use cases. One invoice, one collection (docs/api/payments.md):
 * - initiation runs in the command's transaction (`tx`) with the invoice locked (the lock a
 *   wallet's payment of the invoice takes too), so an invoice never has two pending payments, and
 *   none starts once a payment succeeded or a wallet paid it;
 * - settlement locks the payment row, so a payment settles once whoever reports it (callbacks,
 *   the janitor, the sandbox payer page);
 * - a pending payment whose invoice stopped owing it is canceled where its provider allows it;
 *   one that succeeds anyway is unapplied and returned to the payer in full (returnUnapplied).
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly adapters: ProviderAdapters,
    private readonly prisma: PrismaService,
    private readonly invoicing: InvoicingClient,
    private readonly refunds: RefundsRepository,
    private readonly wallets: WalletsRepository,
    private readonly directory: ProviderDirectory,
    private readonly methods: PaymentMethodsRepository,
    private readonly methodsService: PaymentMethodsService,
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

  /**
   * Automatic attempt `attempt` of a failed `charge_automatically` invoice (smart retries,
   * docs/api/dunning.md#smart-retries): a push to the customer's default payment method as it is
   * now, keyed `collect:<invoice>:<attempt>`. It goes through the one-collection lock (begin): an
   * invoice paid, voided or refunded meanwhile, or one a payment already collected, is not charged.
   */
  async retryCollection(tx: Tx, tenant: TenantRef, invoice: PayableInvoice & { customerId: string }, attempt: number): Promise<CollectionRetry> {
    const method = await this.methods.findDefault(tenant, invoice.customerId, tx);
    if (!method) return { outcome: 'no_payment_method' };
    const key = `collect:${invoice.id}:${attempt}`;
    try {
      const payment = await this.initiatePush(tx, tenant, invoice, { phoneNumber: method.phoneNumber, provider: method.provider }, key);
      // An earlier attempt (or a payer at a page) is still pending: this attempt waits for its end,
      // unrecorded (UNAVAILABLE), so the billing clock asks again rather than count it as made.
      if (payment.providerPaymentId !== providerPaymentIdFor(key)) throw new DomainError('unavailable', 'payment_pending', `Payment '${payment.id}' of invoice '${invoice.id}' is still pending: attempt ${attempt} waits for it.`);
      return { outcome: 'pushed', payment };
    } catch (error) {
      if (isDomainError(error) && error.kind === 'failed_precondition') return { outcome: 'not_owed', reason: error.code };
      throw error;
    }
  }

  private async begin(tx: Tx, tenant: TenantRef, invoice: PayableInvoice, fields: InitiationFields, pushId: string | undefined): Promise<Payment> {
    const provider = checkProvider(await this.directory.resolve(tenant, fields.provider, fields.phoneNumber));
    const phoneNumber = checkPhoneNumber(fields.phoneNumber, provider);
    const saveMethodSource = checkSaveMethodSource(fields.saveMethodSource ?? '');
    // The method the payer asked to save passes the API's checks now (docs/api/payment-methods.md),
    // though it is saved only once the payment succeeds: a mistyped number is never kept.
    if (saveMethodSource) newPaymentMethod(tenant, { customerId: invoice.customerId ?? '', phoneNumber: fields.phoneNumber, provider, consent: true, consentSource: saveMethodSource }, this.now());
    // Provider rules before money moves: an amount the provider cannot take is never sent to it.
    let refusal = await this.providerRefusal(tenant, provider, invoice);
    // A payer (or integrator) at the door is answered 400. A push has nobody to answer: see below.
    if (refusal && pushId === undefined) throw refusal;
    await this.payments.lockInvoice(tx, tenant, invoice.id);
    const pending = await this.payments.findPending(tx, tenant, invoice.id);
    if (pending) return pending.phoneNumber === phoneNumber && pending.provider === provider ? this.askToSave(tx, pending, saveMethodSource) : pending;
    // The invoice read before the lock may be stale: what this service knows of its collection decides.
    await this.assertNotCollected(tx, tenant, invoice.id);
    // A credit note, issued under this same lock (docs/api/credit-notes.md), may have lowered what the
    // invoice owes since the caller read it: the payment asks what it owes now, read under the lock,
    // so a settlement never meets an amount invoicing no longer expects.
    const current = await this.invoicing.payableInvoice(tenant, invoice.id);
    assertPayable(current);
    if (current.amountDue.amountMinor !== invoice.amountDue.amountMinor) {
      refusal = await this.providerRefusal(tenant, provider, current);
      if (refusal && pushId === undefined) throw refusal;
    }
    invoice = { ...invoice, status: current.status, amountDue: current.amountDue };
    const now = this.now();
    const payment = newPayment(tenant, { invoice, ...fields, provider, providerPaymentId: pushId, saveMethodSource }, now);
    let change;
    if (refusal) {
      // A push (automatic collection, auto recharge) the provider cannot take is recorded as failed
      // with the rule's code, without calling the provider: the invoice goes to dunning with its
      // payment link (where the payer may pick another provider), and the event consumer that
      // pushed does not retry a refusal that would never change.
      change = rejectedAtStart(payment, refusal.code, refusal.message, now);
    } else {
      // The payment (with the provider's id we chose) is part of the same commit as the session:
      // if the provider call fails, nothing is kept and a page session's retry starts afresh with a
      // new id; a push's retry repeats its fixed id, which the provider de-duplicates.
      const adapter = this.adapters.forPayment(payment);
      const started = pushId === undefined ? await adapter.start(payment, this.returnUrl(payment)) : await adapter.push(payment, this.returnUrl(payment));
      change = 'rejected' in started
        ? rejectedAtStart(payment, started.rejected.code, started.rejected.message, now)
        : { payment: { ...payment, redirectUrl: started.redirectUrl }, events: [] };
    }
    // The sandbox's simulated phone answers a push at once (the janitor's first check settles it).
    const checkAt = payment.channel === 'push' && payment.adapter === 'sandbox' ? now : new Date(now.getTime() + this.config.statusCheckAfterMs);
    await this.payments.insert(tx, change, checkAt);
    return change.payment;
  }

  /**
   * The pending payment a payer meets again (back from the provider's page, a second submit) with
   * the box now ticked, for the same number and provider: it saves the number on success too.
   */
  private async askToSave(tx: Tx, pending: Payment, source: PageConsentSource | null): Promise<Payment> {
    if (!source || pending.saveMethodSource || pending.channel !== 'page' || !pending.customerId) return pending;
    await this.payments.askToSaveMethod(tx, pending.id, source);
    return { ...pending, saveMethodSource: source };
  }

  /**
   * Why `provider` cannot take what `invoice` asks (a 400 with the rule's code: the currency, the
   * decimal places, the limits), or null when it can. The invoice decides the amount, so the
   * amount's refusals name `invoice_id`; the currency's name `provider`, the choice to change.
   */
  private async providerRefusal(tenant: TenantRef, provider: PaymentProvider, invoice: PayableInvoice): Promise<DomainError | null> {
    if (invoice.amountDue.amountMinor <= 0) return null;
    try {
      await this.directory.checkAmount(tenant, provider, invoice.amountDue, { amount: 'invoice_id', currency: 'provider' });
      return null;
    } catch (error) {
      if (isDomainError(error) && error.kind === 'invalid_argument') return error;
      throw error;
    }
  }

  /**
   * Refuses (409 invoice_paid) when a payment of the invoice succeeded (told to invoicing or not
   * yet) or the customer's wallet paid it: a second collection must never start. Runs under the
   * invoice's lock.
   */
  private async assertNotCollected(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<void> {
    const succeeded = await this.payments.findSucceeded(tx, tenant, invoiceId);
    if (succeeded) throw failedPrecondition('invoice_paid', `Invoice '${invoiceId}' is paid by payment '${succeeded.id}'.`);
    if (await this.wallets.findInvoiceDebit(tx, tenant, invoiceId)) throw failedPrecondition('invoice_paid', `Invoice '${invoiceId}' is paid from its customer's wallet.`);
  }

  /**
   * The invoice `invoiceId` stopped owing money (`reason`: invoice_void, invoice_paid): its pending
   * payments are canceled where the provider allows it (the sandbox: Approve is refused from then
   * on). Live deposits already pushed to a phone stay pending; one that succeeds is returned.
   */
  async cancelPendingOfInvoice(tx: Tx, tenant: TenantRef, invoiceId: string, reason: string): Promise<void> {
    for (const payment of await this.payments.pendingOfInvoiceForUpdate(tx, tenant, invoiceId)) {
      if (cancelable(payment)) await this.payments.saveSettlement(tx, cancel(payment, reason, this.now()));
    }
  }

  /**
   * A payment that succeeded for an invoice that refused it (`reason`: the refusal code) goes back
   * to its payer: the payment is marked unapplied (PaymentUnapplied) and a refund of its full
   * amount is kept in the same transaction, due at once for the refund worker, which carries it to
   * the provider. Once per payment (the marking's condition and a unique index).
   */
  async returnUnapplied(payment: Payment, reason: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const now = this.now();
      const refund = newUnappliedReturn(payment, now);
      const change = unapplied(payment, reason, refund.id, now);
      if (!(await this.payments.saveUnapplied(tx, change, `invoicing refused: ${reason}; returned by ${refund.id}`))) return;
      await this.refunds.insert(tx, refund, now);
      await tx.$executeRaw`SELECT pg_notify(${REFUNDS_DUE_CHANNEL}, '')`;
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  get(tenant: TenantRef, id: string): Promise<Payment> {
    return this.payments.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, invoiceId: string | undefined): Promise<{ payments: Payment[]; page: PageInfo }> {
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
    if (payment.status === 'canceled') throw failedPrecondition('payment_canceled', `${payment.failureMessage} Nothing was collected.`);
    if (decision === 'approve' && payment.status === 'pending') await this.refuseUnlessOwed(payment);
    const outcome: Outcome | null = decision === 'decline'
      ? { status: 'failed', code: 'payment_declined', message: 'The payer declined the payment.' }
      : sandboxApproval(sandboxOutcome(payment.phoneNumber));
    if (!outcome) return payment;
    return (await this.settleById(payment.id, outcome)).payment;
  }

  /**
   * Approve collects only while the invoice still owes the money: a voided or otherwise paid
   * invoice cancels the payment here and refuses (409), so the payer is never charged for it.
   * (Should the invoice move on in the instant after this check, its refusal of the settlement
   * returns the payment: returnUnapplied.)
   */
  private async refuseUnlessOwed(payment: Payment): Promise<void> {
    const invoice = await this.invoicing.payableInvoice(payment.tenant, payment.invoiceId);
    if (invoice.status === 'open' || invoice.status === 'failed') return;
    const reason = invoice.status === 'void' ? 'invoice_void' : 'invoice_paid';
    await this.prisma.$transaction((tx) => this.cancelPendingOfInvoice(tx, payment.tenant, payment.invoiceId, reason), { maxWait: 10_000, timeout: 10_000 });
    throw failedPrecondition(reason, invoice.status === 'void'
      ? `Invoice ${payment.invoiceNumber} was voided: it no longer needs paying, and nothing was collected.`
      : `Invoice ${payment.invoiceNumber} is already ${invoice.status}: nothing more was collected.`);
  }

  /** Authenticates a provider's callback and settles the payment it names (once). */
  async handleCallback(provider: string, callback: ReceivedCallback): Promise<{ outcome: CallbackOutcome; paymentId: string }> {
    const adapter = this.adapters.byName(provider);
    const parsed = await adapter.parseCallback(callback);
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
      if (change.payment.status === 'succeeded' && change.events.length > 0) await this.saveMethodOf(tx, change.payment);
      return { payment: change.payment, changed: change.events.length > 0 };
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /**
   * A payment that succeeded where the payer ticked "save this number": the number and provider
   * become the customer's payment method, in the settlement's own transaction (a succeeded payment
   * that asked for it always has it), by the API's rule (docs/api/payment-methods.md): the same
   * number and provider answer the method saved before; the first method becomes the default.
   */
  private async saveMethodOf(tx: Tx, payment: Payment): Promise<void> {
    if (!payment.saveMethodSource || !payment.customerId) return;
    await this.methodsService.create(tx, payment.tenant, {
      customerId: payment.customerId, phoneNumber: payment.phoneNumber, provider: payment.provider, consent: true, consentSource: payment.saveMethodSource, consentAt: payment.createdAt,
    }, undefined);
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
