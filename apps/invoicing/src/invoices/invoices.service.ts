import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type DomainError, isDomainError, type Page, type TenantRef } from '@recur/kernel';
import { DunningSchedulesRepository } from '../dunning/dunning-schedules.repository';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { INVOICING_CONFIG, type InvoicingConfig } from '../invoicing-config';
import { FINALIZED_SEND_KEY, InvoiceMailer } from '../mail/invoice-mail';
import {
  assertMove,
  billableCustomer,
  checkCreateStatus,
  createdAndFinalized,
  createOneOffInvoice,
  createSubscriptionInvoice,
  type CustomerLookup,
  finalizeInvoice,
  type Invoice,
  type InvoiceChange,
  type OneOffInvoiceFields,
  failInvoicePayment,
  payInvoice,
  remindOfInvoice,
  type Settlement,
  type SubscriptionInvoiceFields,
  voidInvoice,
} from './invoice';
import { type InvoiceFilter, InvoicesRepository } from './invoices.repository';

type Tx = Prisma.TransactionClient;

/** One period of a batch: its tenant, its customer as looked up, its fields. */
export interface SubscriptionPeriodItem {
  tenant: TenantRef;
  customer: CustomerLookup;
  fields: SubscriptionInvoiceFields;
}
export type SubscriptionPeriodOutcome = { invoice: Invoice } | { error: DomainError };

/** A batch holds its tenants' invoice counters until it commits: room for a few hundred invoices. */
const BATCH_TRANSACTION = { maxWait: 10_000, timeout: 60_000 };

/**
 * Invoice use cases. Each runs in the command's transaction (`tx`); the invoice records its
 * own events, and saving it writes them to the outbox too. A customer lookup (`CustomerLookup`)
 * is made by the caller before the transaction and judged here.
 */
@Injectable()
export class InvoicesService {
  constructor(
    private readonly invoices: InvoicesRepository,
    private readonly dunningSchedules: DunningSchedulesRepository,
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(INVOICING_CONFIG) private readonly config: InvoicingConfig,
    private readonly mailer: InvoiceMailer<Tx>,
  ) {}

  /** `sellerName` is the account's name, printed on the PDF of the e-mail sent when created open. */
  async createOneOff(tx: Tx, tenant: TenantRef, customer: CustomerLookup, fields: OneOffInvoiceFields, sellerName: string): Promise<Invoice> {
    const status = checkCreateStatus(fields.status);
    const now = this.now();
    const draft = createOneOffInvoice(tenant, billableCustomer(customer), fields, now);
    const change = status === 'open' ? createdAndFinalized(await this.finalization(tx, draft.invoice, customer, now)) : draft;
    await this.invoices.insert(tx, change);
    if (change.invoice.status === 'open') await this.mailFinalized(tx, change.invoice, sellerName);
    return change.invoice;
  }

  /** The invoice of one subscription period: raised once, finalized at once; a repeat answers it again. */
  async createForSubscriptionPeriod(tx: Tx, tenant: TenantRef, customer: CustomerLookup, fields: SubscriptionInvoiceFields): Promise<Invoice> {
    await this.invoices.lockSubscriptionPeriod(tx, tenant, fields.subscriptionId, fields.periodStart);
    const earlier = await this.invoices.findByPeriod(tx, tenant, fields.subscriptionId, fields.periodStart);
    if (earlier) return earlier;
    const now = this.now();
    const draft = createSubscriptionInvoice(tenant, billableCustomer(customer), fields, now);
    const change = createdAndFinalized(await this.finalization(tx, draft.invoice, customer, now));
    await this.invoices.insert(tx, change);
    // The subscription service does not know the account's name: the PDF's seller line stays generic.
    await this.mailFinalized(tx, change.invoice, '');
    return change.invoice;
  }

  /**
   * Several periods' invoices in one transaction, each raised by createForSubscriptionPeriod as
   * a single call raises it; a DomainError (bad input, a deleted customer) refuses its own item
   * only. Any other failure rolls the whole batch back, and the caller repeats it: each item
   * is idempotent by its period.
   */
  async createForSubscriptionPeriods(items: SubscriptionPeriodItem[]): Promise<SubscriptionPeriodOutcome[]> {
    // Tenants in one order too: each tenant's invoice counter stays locked until the commit, so
    // two batches taking two counters in opposite orders would deadlock.
    const tenantKey = ({ tenant }: SubscriptionPeriodItem) => `${tenant.accountId}:${tenant.livemode}`;
    const order = items.map((_, index) => index).sort((a, b) => tenantKey(items[a]).localeCompare(tenantKey(items[b])) || a - b);
    return this.prisma.$transaction(async (tx) => {
      await this.invoices.lockSubscriptionPeriods(tx, items.map((item) => ({ tenant: item.tenant, subscriptionId: item.fields.subscriptionId, periodStart: item.fields.periodStart })));
      const outcomes: SubscriptionPeriodOutcome[] = new Array(items.length);
      for (const index of order) {
        const item = items[index];
        try {
          outcomes[index] = { invoice: await this.createForSubscriptionPeriod(tx, item.tenant, item.customer, item.fields) };
        } catch (error) {
          if (!isDomainError(error)) throw error;
          outcomes[index] = { error };
        }
      }
      return outcomes;
    }, BATCH_TRANSACTION);
  }

  get(tenant: TenantRef, id: string): Promise<Invoice> {
    return this.invoices.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, filter: InvoiceFilter): Promise<{ invoices: Invoice[]; total: number }> {
    return this.invoices.list(tenant, page, filter);
  }

  async finalize(tx: Tx, tenant: TenantRef, id: string, customer: CustomerLookup, sellerName: string): Promise<Invoice> {
    const invoice = await this.invoices.getForUpdate(tx, tenant, id);
    const change = await this.finalization(tx, invoice, customer, this.now());
    await this.invoices.update(tx, change);
    await this.mailFinalized(tx, change.invoice, sellerName);
    return change.invoice;
  }

  /**
   * Queues the invoice's e-mail again (a finalized invoice that is not void). `sendKey` names
   * this send (the command's request id), so a retried command queues one mail.
   */
  async resend(tx: Tx, tenant: TenantRef, id: string, sellerName: string, sendKey: string): Promise<{ invoice: Invoice; mailId: string }> {
    const invoice = await this.invoices.get(tenant, id, tx);
    const mailId = await this.mailer.queue(tx, invoice, { kind: 'invoice', sendKey: `resend:${sendKey}`, sellerName });
    return { invoice, mailId };
  }

  async void(tx: Tx, tenant: TenantRef, id: string): Promise<Invoice> {
    const change = voidInvoice(await this.invoices.getForUpdate(tx, tenant, id), this.now());
    await this.invoices.update(tx, change);
    return change.invoice;
  }

  /** Records a settled payment on the invoice (`pay`). The caller makes it idempotent by payment id. */
  async pay(tx: Tx, tenant: TenantRef, id: string, settlement: Settlement): Promise<Invoice> {
    const change = payInvoice(await this.invoices.getForUpdate(tx, tenant, id), settlement, this.now());
    await this.invoices.update(tx, change);
    return change.invoice;
  }

  /**
   * Records a failed payment attempt on the invoice (`fail`): dunning starts from here, on the
   * account's schedule (its dunning_schedules row, else DUNNING_SCHEDULE_DAYS), carried by the
   * InvoicePaymentFailed event to the billing clock that runs it.
   */
  async failPayment(tx: Tx, tenant: TenantRef, id: string, paymentId: string, failureCode: string): Promise<Invoice> {
    const invoice = await this.invoices.getForUpdate(tx, tenant, id);
    const schedule = (await this.dunningSchedules.find(tx, tenant))?.days ?? this.config.dunningScheduleDays;
    const change = failInvoicePayment(invoice, paymentId, failureCode, schedule, this.now());
    await this.invoices.update(tx, change);
    return change.invoice;
  }

  /**
   * Sends dunning reminder `reminderNumber` of `reminderCount` of a failed invoice: its e-mail
   * (send key `reminder:<n>`, so once per reminder) and `invoice.dunning_retry`, in one
   * transaction. The invoice row is locked, so a payment settling at the same moment either
   * comes first (nothing is sent) or after (the reminder went out while it was unpaid).
   */
  async sendDunningReminder(tx: Tx, tenant: TenantRef, id: string, reminderNumber: number, reminderCount: number): Promise<{ invoice: Invoice; sent: boolean }> {
    const change = remindOfInvoice(await this.invoices.getForUpdate(tx, tenant, id), reminderNumber, reminderCount, this.now());
    if (change.sent) {
      // Renewal invoices' seller is unknown here too (see createForSubscriptionPeriod).
      await this.mailer.queue(tx, change.invoice, { kind: 'reminder', reminderNumber, sellerName: '' });
      await this.invoices.recordEvents(tx, change.events);
    }
    return { invoice: change.invoice, sent: change.sent };
  }

  /** Every finalization e-mails the invoice to its customer, unless turned off (INVOICE_MAIL_ON_FINALIZE). */
  private async mailFinalized(tx: Tx, invoice: Invoice, sellerName: string): Promise<void> {
    if (this.config.mailOnFinalize) await this.mailer.queue(tx, invoice, { kind: 'invoice', sendKey: FINALIZED_SEND_KEY, sellerName });
  }

  /** Finalizes `invoice`, taking the tenant's next number inside `tx` (gapless: see nextNumber). */
  private async finalization(tx: Tx, invoice: Invoice, customer: CustomerLookup, now: Date): Promise<InvoiceChange> {
    // Judge the move and the customer first: a refused finalization never waits for the counter.
    assertMove(invoice, 'finalize');
    const billed = billableCustomer(customer);
    const number = await this.invoices.nextNumber(tx, invoice.tenant);
    return finalizeInvoice(invoice, { number, customer: billed, ...this.paymentPage() }, now);
  }

  /** The invoice and its tenant, found by the token of its hosted payment page (the page's only credential). */
  getForPayment(paymentToken: string): Promise<Invoice> {
    return this.invoices.getByPaymentToken(paymentToken);
  }

  /**
   * A new payment page: an unguessable token (an invoice id is no secret, so the page is not
   * reached by it) and the URL that ends with it.
   */
  private paymentPage(): { paymentUrl: string; paymentToken: string } {
    const paymentToken = randomBytes(32).toString('base64url');
    return { paymentToken, paymentUrl: `${this.config.paymentPageUrl}/${paymentToken}` };
  }
}
