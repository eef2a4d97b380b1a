import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { zero } from '@recur/money';
import { checkTaxRateIds, CLOCK, type Clock, type DomainError, isDomainError, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { DunningSchedulesRepository } from '../dunning/dunning-schedules.repository';
import { DEFAULT_PAYMENT_RETRY_SCHEDULE, paymentRetryTimes } from '../dunning/payment-retry-schedule';
import type { OpenTransaction } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { PlainTransactions } from '../infrastructure/commands';
import { INVOICING_CONFIG, type InvoicingConfig } from '../invoicing-config';
import { FINALIZED_SEND_KEY, InvoiceMailer } from '../mail/invoice-mail';
import {
  appliedBalance,
  assertMove,
  consumeBalance,
  billableCustomer,
  checkCreateStatus,
  createdAndFinalized,
  createOneOffInvoice,
  createSubscriptionInvoice,
  type BilledCustomer,
  type CustomerLookup,
  finalizeInvoice,
  formatInvoiceNumber,
  type Invoice,
  type InvoiceChange,
  type OneOffInvoiceFields,
  failInvoicePayment,
  type PaymentFailure,
  isFinalInvoice,
  payInvoice,
  remindOfInvoice,
  type Settlement,
  type SubscriptionInvoiceFields,
  taxedTotals,
  UNTAXED,
  voidInvoice,
} from './invoice';
import { type InvoiceFilter, InvoicesRepository, type SubscriptionInvoiceKey, tenantKey } from './invoices.repository';
import { TaxRatesService } from '../tax-rates/tax-rates.service';
import { balanceKey, CustomerBalancesService } from '../balances/customer-balances.service';

/** Each one-off line's own rate ids; the one-line (`amount`) form names none. */
const oneOffLineRateIds = (fields: OneOffInvoiceFields): string[][] =>
  fields.amount !== undefined || fields.lines === undefined ? [[]] : fields.lines.map((line, index) => checkTaxRateIds(line.taxRateIds ?? [], `lines[${index}].tax_rates`));
const subscriptionLineRateIds = (fields: Pick<SubscriptionInvoiceFields, 'lines'>): string[][] =>
  fields.lines.map((line, index) => checkTaxRateIds(line.taxRateIds ?? [], `lines[${index}].tax_rate_ids`));

type Tx = Prisma.TransactionClient;

/** A subscription invoice is raised once per key: its period's, or its final invoice's. */
const subscriptionInvoiceKey = (tenant: TenantRef, fields: SubscriptionInvoiceFields): SubscriptionInvoiceKey =>
  ({ tenant, subscriptionId: fields.subscriptionId, periodStart: fields.periodStart, final: isFinalInvoice(fields) });

/**
 * A final invoice raised with `refundCredit` (`refund: true` on a cancellation): its credit is
 * refunded through the period's invoice (docs/api/subscriptions.md#refunding-the-credit).
 */
const refundsCredit = (fields: SubscriptionInvoiceFields): boolean => fields.refundCredit === true && isFinalInvoice(fields);

/** One period of a batch: its tenant, its customer as looked up, its fields. */
export interface SubscriptionPeriodItem {
  tenant: TenantRef;
  customer: CustomerLookup;
  fields: SubscriptionInvoiceFields;
}
export type SubscriptionPeriodOutcome = { invoice: Invoice } | { error: DomainError };

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
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(INVOICING_CONFIG) private readonly config: InvoicingConfig,
    private readonly mailer: InvoiceMailer<OpenTransaction>,
    private readonly plain: PlainTransactions,
    private readonly taxRates: TaxRatesService,
    private readonly balances: CustomerBalancesService,
  ) {}

  /** `sellerName` is the account's name, printed on the PDF of the e-mail sent when created open. */
  async createOneOff(tx: Tx, tenant: TenantRef, customer: CustomerLookup, fields: OneOffInvoiceFields, sellerName: string): Promise<Invoice> {
    const status = checkCreateStatus(fields.status);
    const now = this.now();
    const billed = billableCustomer(customer);
    // A wallet top-up buys credit, not a supply: it is not taxed (docs/api/tax-rates.md#which-rate-applies).
    const taxing = fields.billingReason === 'top_up' ? UNTAXED : await this.taxRates.taxing(tx, { tenant, customer: billed, lineRateIds: oneOffLineRateIds(fields) });
    const draft = createOneOffInvoice(tenant, billed, fields, now, taxing);
    const change = status === 'open' ? createdAndFinalized(await this.finalization(tx, draft.invoice, customer, now)) : draft;
    await this.invoices.insert(tx, change);
    if (change.invoice.status === 'open') await this.mailFinalized(tx, change.invoice, sellerName);
    return change.invoice;
  }

  /** The invoice of one subscription period: raised once, finalized at once; a repeat answers it again. */
  async createForSubscriptionPeriod(tx: Tx, tenant: TenantRef, customer: CustomerLookup, fields: SubscriptionInvoiceFields): Promise<Invoice> {
    const key = subscriptionInvoiceKey(tenant, fields);
    await this.invoices.lockSubscriptionPeriod(tx, key);
    const earlier = await this.invoices.findByPeriod(tx, key);
    if (earlier) return earlier;
    const now = this.now();
    const billed = billableCustomer(customer);
    const taxing = await this.taxRates.taxing(tx, { tenant, customer: billed, lineRateIds: subscriptionLineRateIds(fields) });
    const draft = createSubscriptionInvoice(tenant, billed, fields, now, taxing);
    if (refundsCredit(fields)) draft.invoice.creditRefundInvoiceId = (await this.invoices.findByPeriod(tx, { ...key, final: false }))?.id ?? null;
    const change = createdAndFinalized(await this.finalization(tx, draft.invoice, customer, now));
    await this.invoices.insert(tx, change);
    // The subscription service does not know the account's name: the PDF's seller line stays generic.
    await this.mailFinalized(tx, change.invoice, '');
    return change.invoice;
  }

  /**
   * Several periods' invoices in one transaction of a fixed number of statements whatever
   * their count (the billing clock's batches): the periods locked, those already raised found,
   * each tenant's numbers taken as one range, then every invoice, line, event and e-mail written
   * at once. Each period is raised once: a period raised before (a repeat after a lost answer)
   * answers its invoice as it stands. A DomainError (bad input, a deleted customer) refuses its
   * own item only; any other failure rolls the whole batch back, and the caller repeats it.
   */
  async createForSubscriptionPeriods(items: SubscriptionPeriodItem[]): Promise<SubscriptionPeriodOutcome[]> {
    const outcomes: SubscriptionPeriodOutcome[] = new Array(items.length);
    const raisedBefore = new Map<number, string>();
    await this.plain.transaction(async (tx) => {
      const keys = items.map(({ tenant, fields }) => subscriptionInvoiceKey(tenant, fields));
      await this.invoices.lockSubscriptionPeriods(tx, keys);
      for (const [index, id] of await this.invoices.raisedPeriods(tx, keys)) raisedBefore.set(index, id);
      const now = this.now();
      const drafts: { index: number; invoice: Invoice; customer: BilledCustomer }[] = [];
      const firstOfPeriod = new Map<string, number>();
      const taxRules = await this.taxRates.rules(tx, items.flatMap((item) => {
        try {
          return [{ tenant: item.tenant, customer: billableCustomer(item.customer), lineRateIds: subscriptionLineRateIds(item.fields) }];
        } catch (error) {
          if (isDomainError(error)) return [];
          throw error;
        }
      }));
      for (const [index, item] of items.entries()) {
        if (raisedBefore.has(index)) continue;
        // The same period twice in one batch: the second answers the first's invoice.
        const period = JSON.stringify([tenantKey(item.tenant), keys[index]]);
        if (firstOfPeriod.has(period)) continue;
        firstOfPeriod.set(period, index);
        try {
          const customer = billableCustomer(item.customer);
          const taxing = taxRules({ tenant: item.tenant, customer, lineRateIds: subscriptionLineRateIds(item.fields) });
          const { invoice } = createSubscriptionInvoice(item.tenant, customer, item.fields, now, taxing);
          assertMove(invoice, 'finalize');
          drafts.push({ index, invoice, customer });
        } catch (error) {
          if (!isDomainError(error)) throw error;
          outcomes[index] = { error };
        }
      }
      // A final invoice whose credit is refunded names the period's invoice it goes back through.
      const refunding = drafts.filter(({ index }) => refundsCredit(items[index].fields));
      if (refunding.length > 0) {
        const periodInvoices = await this.invoices.raisedPeriods(tx, refunding.map(({ index }) => ({ ...keys[index], final: false })));
        refunding.forEach((draft, position) => (draft.invoice.creditRefundInvoiceId = periodInvoices.get(position) ?? null));
      }
      // Each tenant's numbers in period order: a subscription's earlier period takes the lower
      // number, and a period's final invoice one after its period invoice.
      drafts.sort((a, b) => tenantKey(a.invoice.tenant).localeCompare(tenantKey(b.invoice.tenant))
        || a.invoice.periodStart!.getTime() - b.invoice.periodStart!.getTime() || Number(isFinalInvoice(a.invoice)) - Number(isFinalInvoice(b.invoice)) || a.index - b.index);
      const counts = new Map<string, { tenant: TenantRef; count: number }>();
      for (const { invoice } of drafts) {
        const range = counts.get(tenantKey(invoice.tenant)) ?? { tenant: invoice.tenant, count: 0 };
        counts.set(tenantKey(invoice.tenant), { ...range, count: range.count + 1 });
      }
      // Each customer's credit, locked once for the batch (before the counters, as every
      // finalization takes them: docs/api/customer-balance.md#concurrency) and consumed in number order.
      const balances = await this.balances.lockForFinalization(tx, drafts.map(({ invoice, customer }) => ({ ...invoice, customer })));
      const nextNumbers = drafts.length === 0 ? new Map<string, number>() : await this.invoices.takeNumbers(tx, [...counts.values()]);
      const changes = drafts.map(({ invoice, customer }) => {
        const key = tenantKey(invoice.tenant);
        const number = nextNumbers.get(key)!;
        nextNumbers.set(key, number + 1);
        const owner = balanceKey(invoice.tenant, customer.id);
        const change = finalizeInvoice(invoice, { number: formatInvoiceNumber(number), customer, ...this.paymentPage(), balance: balances.get(owner) }, now);
        if (balances.has(owner) && appliedBalance(change.invoice) !== 0) balances.set(owner, change.invoice.endingBalance);
        return createdAndFinalized(change);
      });
      await this.balances.recordConsumed(tx, changes.map(({ invoice }) => invoice), now);
      await this.invoices.insertAll(tx, changes);
      // The subscription service does not know the account's name: the PDF's seller line stays generic.
      if (this.config.mailOnFinalize) await this.mailer.queueAll(tx, changes.map(({ invoice }) => invoice), { kind: 'invoice', sendKey: FINALIZED_SEND_KEY, sellerName: '' });
      drafts.forEach(({ index }, position) => (outcomes[index] = { invoice: changes[position].invoice }));
      for (const [index, item] of items.entries()) {
        const first = firstOfPeriod.get(JSON.stringify([tenantKey(item.tenant), keys[index]]));
        if (first !== undefined && first !== index) outcomes[index] = outcomes[first];
      }
    });
    for (const [index, id] of raisedBefore) outcomes[index] = { invoice: await this.invoices.get(items[index].tenant, id) };
    return outcomes;
  }

  get(tenant: TenantRef, id: string): Promise<Invoice> {
    return this.invoices.get(tenant, id);
  }

  /**
   * The upcoming-invoice preview's figures: the lines taxed exactly as raising the invoice would,
   * and the customer's credit applied as finalizing it would apply it now (the balance read, not
   * locked: docs/api/customer-balance.md#invoices-consume-credit).
   */
  async previewTax(tenant: TenantRef, customer: CustomerLookup, fields: Pick<SubscriptionInvoiceFields, 'currency' | 'lines' | 'discount'>) {
    const billed = billableCustomer(customer);
    const lines = fields.lines.map((line) => ({ ...line, id: '', description: line.description }));
    const taxing = await this.plain.transaction((tx) => this.taxRates.taxing(tx, { tenant, customer: billed, lineRateIds: subscriptionLineRateIds(fields) }));
    const totals = taxedTotals(fields.currency, lines, fields.discount ?? zero(fields.currency), taxing);
    const [balance] = await this.balances.balancesOf(tenant, [billed.id]);
    return { ...totals, ...consumeBalance(totals.amountDue, balance ?? undefined) };
  }

  list(tenant: TenantRef, page: Page, filter: InvoiceFilter): Promise<{ invoices: Invoice[]; page: PageInfo }> {
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
   * Records a failed payment attempt on the invoice (`fail`): the automatic retries of a
   * `charge_automatically` charge (planned from `ownNow`, the invoice's own time — looked up for
   * an automatic charge's failure, null otherwise — on the account's
   * retry schedule) and dunning after them (its dunning_schedules row, else DUNNING_SCHEDULE_DAYS),
   * carried by the InvoicePaymentFailed event to the billing clock that runs both.
   */
  async failPayment(tx: Tx, tenant: TenantRef, id: string, failure: PaymentFailure, ownNow: Date | null): Promise<Invoice> {
    const invoice = await this.invoices.getForUpdate(tx, tenant, id);
    const stored = await this.dunningSchedules.find(tx, tenant);
    const retries = stored?.paymentRetries ?? DEFAULT_PAYMENT_RETRY_SCHEDULE;
    const plan = (firstFailure: Date) => paymentRetryTimes(firstFailure, retries);
    const change = failInvoicePayment(invoice, failure, stored?.days ?? this.config.dunningScheduleDays, plan, ownNow, this.now());
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
    // The customer's credit is locked until the transaction ends: a concurrent finalization of
    // the same customer waits and sees what this one left. Balances are locked before the
    // invoice counter everywhere, so no two finalizations wait on each other in a cycle
    // (docs/api/customer-balance.md#concurrency).
    const balances = await this.balances.lockForFinalization(tx, [{ ...invoice, customer: billed }]);
    const number = await this.invoices.nextNumber(tx, invoice.tenant);
    const change = finalizeInvoice(invoice, { number, customer: billed, ...this.paymentPage(), balance: balances.get(balanceKey(invoice.tenant, billed.id)) }, now);
    await this.balances.recordConsumed(tx, [change.invoice], now);
    return change;
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
