import { Injectable } from '@nestjs/common';
import { failedPrecondition, invalidArgument, type Metadata, notFound, type Page, type PageInfo, type TenantRef, unixSeconds } from '@recur/kernel';
import { CustomersRepository } from '../customers/customers.repository';
import type { Prisma } from '../generated/prisma/client';
import { TestClocksRepository } from '../test-clocks/test-clocks.repository';
import { UsageMeteringClient } from '../billing-clock/usage-metering.client';
import { InvoicingClient } from '../billing-clock/invoicing.client';
import type { invoicingV1 } from '@recur/contracts';
import { CatalogPlans } from './catalog-plans.client';
import {
  cancelAtPeriodEnd,
  cancelNow,
  createSubscription,
  cutUsageToBill,
  extendTrial,
  finalUsageToBill,
  keep,
  pause,
  reactivate,
  type NewSubscription,
  type PeriodInvoice,
  resume,
  SUBSCRIPTION_STATUSES,
  type Subscription,
  type SubscriptionAddOn,
  type SubscriptionChange,
  type SubscriptionStatus,
  upcomingInvoice,
  usagePeriodToBill,
  type PeriodUsage,
  invoiceLineKind,
  invoiceLinePeriod,
} from './subscription';
import {
  addAddOn,
  applyDiscount,
  assertCanTakeDiscount,
  cancelPendingChange,
  changeBillingInterval,
  changePlanNow,
  type PlanChange,
  removeAddOn,
  removeDiscount,
  schedulePlanChange,
  updateAddOn,
} from './subscription-changes';
import { SubscriptionsRepository } from './subscriptions.repository';
import { startDiscount } from './discount';

/** The upcoming invoice's lines as its invoice lines will be: kind and period as invoicing records them. */
export const upcomingLines = (invoice: PeriodInvoice) =>
  invoice.price.lines.map((line) => {
    const kind = invoiceLineKind(line);
    // The period each line of the invoice will carry (a usage line: the period it was used in).
    const period = invoiceLinePeriod(kind, line.period, { start: unixSeconds(invoice.periodStart), end: unixSeconds(invoice.periodEnd) });
    return { kind, description: line.description, quantity: line.quantity, amount: line.amount, period: period ?? null, taxRateIds: line.taxRateIds ?? [] };
  });

type Tx = Prisma.TransactionClient;

export interface CreateSubscriptionInput {
  customerId: string;
  planId: string;
  billingInterval: string;
  quantity?: number;
  trialDays?: number;
  trialEnd?: Date;
  billingCycles?: number;
  collectionMethod?: string;
  metadata?: Metadata;
  addOns?: { addonId: string; quantity?: number }[];
  promotionCode?: string;
  firstInvoiceReason?: NewSubscription['firstInvoiceReason'];
}

/** The catalog command id of a redemption made by subscription command `requestId`: repeated with it, never without one. */
const redemptionId = (requestId: string): string => (requestId ? `redeem:${requestId}` : '');

export const PLAN_CHANGE_EFFECTS = ['immediately', 'period_end'] as const;

/**
 * Subscription use cases. Each reads the subscription's own time (its customer's test clock,
 * or the injected clock), applies one rule of the aggregate and saves the change in the
 * command's transaction (`tx`) with its events, its invoice and the clock's next step.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly customers: CustomersRepository,
    private readonly clocks: TestClocksRepository,
    private readonly catalog: CatalogPlans,
    private readonly usage: UsageMeteringClient,
    private readonly invoicing: InvoicingClient,
  ) {}

  async create(tx: Tx, tenant: TenantRef, input: CreateSubscriptionInput, requestId: string): Promise<Subscription> {
    if (!input.customerId) throw invalidArgument('customer', 'customer is required', 'parameter_missing');
    if (!input.planId) throw invalidArgument('plan', 'plan is required', 'parameter_missing');
    const customer = await this.customers.getForUpdate(tx, tenant, input.customerId).catch(() => {
      throw invalidArgument('customer', `No such customer: '${input.customerId}'`, 'resource_missing');
    });
    if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot subscribe.`);
    const plan = await this.catalog.sellable(tenant, input.planId);
    const addOns = await Promise.all((input.addOns ?? []).map(async ({ addonId, quantity }, index) => ({ addOn: await this.catalog.addOn(tenant, addonId, `add_ons[${index}].addon`), quantity })));
    const now = await this.clocks.timeOf(tx, customer.testClockId);
    const fields = { ...input, addOns, price: plan.price, planIntervals: plan.billingIntervals, testClockId: customer.testClockId };
    // Every rule is checked before the code is redeemed, so a refused subscription counts no redemption.
    createSubscription(tenant, fields, now);
    const discount = input.promotionCode === undefined
      ? null
      : startDiscount(await this.catalog.redeem(tenant, input.promotionCode, now, plan.price.currency, redemptionId(requestId)), now);
    const change = createSubscription(tenant, { ...fields, discount }, now);
    await this.subscriptions.insert(tx, change);
    return change.subscription;
  }

  get(tenant: TenantRef, id: string): Promise<Subscription> {
    return this.subscriptions.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, filter: { customerId?: string; status?: string }): Promise<{ subscriptions: Subscription[]; page: PageInfo }> {
    if (filter.status !== undefined && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(filter.status)) {
      throw invalidArgument('status', `status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
    }
    return this.subscriptions.list(tenant, page, { customerId: filter.customerId, status: filter.status as SubscriptionStatus | undefined });
  }

  async cancel(tx: Tx, tenant: TenantRef, id: string, atPeriodEnd: boolean, prorate = false, refund = false): Promise<Subscription> {
    // Unused time is credited only when it ends now: at the period's end none is left.
    if (atPeriodEnd && prorate) throw invalidArgument('prorate', 'prorate applies to a cancellation now; at the period\'s end no time is left unused.');
    // What is refunded is the unused time's credit: there is none without prorate.
    if (refund && !prorate) throw invalidArgument('refund', 'refund gives back the credit for the unused time: it needs prorate: true.');
    if (atPeriodEnd) return this.change(tx, tenant, id, cancelAtPeriodEnd);
    // The final invoice bills the usage of the period so far: measured (and recorded as billed)
    // under the row lock, so no clock step bills that period meanwhile.
    const subscription = await this.subscriptions.getForUpdate(tx, tenant, id);
    const now = await this.clocks.timeOf(tx, subscription.testClockId);
    const toBill = finalUsageToBill(subscription, now);
    const [usage] = toBill ? await this.usage.periodUsage([{ tenant, subscriptionId: id, ...toBill }]) : [[]];
    return this.save(tx, cancelNow(subscription, now, usage, { prorate, refund }));
  }

  async pause(tx: Tx, tenant: TenantRef, id: string, resumeAt: Date | null): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => pause(subscription, resumeAt, now));
  }

  async resume(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    // The invoice of the resumed period bills the usage of the period the pause interrupted:
    // measured (and recorded as billed) under the row lock, so no clock step bills it meanwhile.
    const paused = await this.subscriptions.getForUpdate(tx, tenant, id);
    const usage = await this.usageToBill(paused, true);
    return this.change(tx, tenant, id, (subscription, now) => resume(subscription, now, now, usage));
  }

  async extendTrial(tx: Tx, tenant: TenantRef, id: string, trialEnd: Date): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => extendTrial(subscription, trialEnd, now));
  }

  /**
   * A subscription set to end at its period's end is kept; a cancelled one comes back as a
   * new subscription (once: a second reactivation of the same one is refused).
   */
  async reactivate(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    const old = await this.subscriptions.getForUpdate(tx, tenant, id);
    const now = await this.clocks.timeOf(tx, old.testClockId);
    if (old.status !== 'cancelled') {
      const change = keep(old, now);
      await this.subscriptions.update(tx, change);
      return change.subscription;
    }
    const earlier = await this.subscriptions.reactivationOf(tx, tenant, old.id);
    if (earlier) throw failedPrecondition('subscription_already_reactivated', `Subscription '${old.id}' was already reactivated as '${earlier}'.`);
    const customer = await this.customers.getForUpdate(tx, tenant, old.customerId);
    if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot subscribe.`);
    const change = reactivate(old, now);
    await this.subscriptions.insert(tx, change);
    return change.subscription;
  }

  /** Changes plan and/or quantity now (prorated onto the next invoice) or at the period's end (a pending change). */
  async changePlan(tx: Tx, tenant: TenantRef, id: string, input: { planId?: string; quantity?: number; effective?: string }): Promise<Subscription> {
    const effective = input.effective || 'immediately';
    if (!(PLAN_CHANGE_EFFECTS as readonly string[]).includes(effective)) throw invalidArgument('effective', `effective must be one of ${PLAN_CHANGE_EFFECTS.join(', ')}`);
    if (input.planId === undefined && input.quantity === undefined) throw invalidArgument('plan', 'Give a plan, a quantity, or both.', 'parameter_missing');
    const change: PlanChange = { quantity: input.quantity };
    if (input.planId !== undefined) {
      const plan = await this.catalog.sellable(tenant, input.planId);
      change.plan = { id: plan.id, price: plan.price, billingIntervals: plan.billingIntervals };
    }
    return this.change(tx, tenant, id, (subscription, now) => (effective === 'period_end' ? schedulePlanChange(subscription, change, now) : changePlanNow(subscription, change, now)));
  }

  async cancelPendingChange(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    return this.change(tx, tenant, id, cancelPendingChange);
  }

  /**
   * The invoice of the new period also bills the usage of the period the change cuts short:
   * measured (and recorded as billed, under that period's key) under the row lock once the
   * change is known to be allowed, so a refused change records nothing and no clock step bills
   * that period meanwhile.
   */
  async changeBillingInterval(tx: Tx, tenant: TenantRef, id: string, interval: string): Promise<Subscription> {
    const current = await this.subscriptions.get(tenant, id, tx);
    const offered = await this.catalog.planIntervals(tenant, current.planId);
    const subscription = await this.subscriptions.getForUpdate(tx, tenant, id);
    const now = await this.clocks.timeOf(tx, subscription.testClockId);
    changeBillingInterval(subscription, interval, offered, now);
    const toBill = cutUsageToBill(subscription, now);
    const [usage] = toBill ? await this.usage.periodUsage([{ tenant, subscriptionId: id, ...toBill }]) : [[]];
    return this.save(tx, changeBillingInterval(subscription, interval, offered, now, usage));
  }

  /**
   * Redeems the code in the catalog (once per request id) and applies its coupon. The
   * subscription's state is checked first, so a refused application counts no redemption.
   */
  async applyPromotionCode(tx: Tx, tenant: TenantRef, id: string, code: string, requestId: string): Promise<Subscription> {
    if (!code) throw invalidArgument('promotion_code', 'promotion_code is required', 'parameter_missing');
    const subscription = await this.subscriptions.getForUpdate(tx, tenant, id);
    assertCanTakeDiscount(subscription);
    const now = await this.clocks.timeOf(tx, subscription.testClockId);
    const redeemed = await this.catalog.redeem(tenant, code, now, subscription.price.currency, redemptionId(requestId));
    return this.save(tx, applyDiscount(subscription, redeemed, now));
  }

  async removePromotionCode(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    return this.change(tx, tenant, id, removeDiscount);
  }

  /**
   * The next period's invoice as it will be raised: priced here by the billing clock's function,
   * taxed by invoicing with the same rules and arithmetic it raises invoices with.
   */
  async upcomingInvoice(tenant: TenantRef, id: string): Promise<{ subscription: Subscription; invoice: PeriodInvoice; tax: invoicingV1.PreviewInvoiceTaxResponse }> {
    const subscription = await this.subscriptions.get(tenant, id);
    const invoice = upcomingInvoice(subscription, await this.usageToBill(subscription, false));
    const tax = await this.invoicing.previewTax(tenant, subscription.customerId, {
      currency: invoice.price.currency,
      lines: upcomingLines(invoice),
      discount: invoice.price.discount,
    });
    return { subscription, invoice, tax };
  }

  /**
   * The usage the subscription's next period invoice bills, measured by usage-metering as the
   * billing clock measures it; `bill` records it as billed (a move that invoices it), otherwise
   * it is a preview. Nothing when the next move bills no metered period.
   */
  private async usageToBill(subscription: Subscription, bill: boolean): Promise<PeriodUsage> {
    const toBill = usagePeriodToBill(subscription);
    if (!toBill) return [];
    const [usage] = await this.usage.periodUsage([{ tenant: subscription.tenant, subscriptionId: subscription.id, period: toBill.period, billingInterval: toBill.billingInterval, metricNames: toBill.metricNames, billingKey: bill ? toBill.billingKey : null }]);
    return usage;
  }

  async addAddOn(tx: Tx, tenant: TenantRef, id: string, addonId: string, quantity: number | undefined): Promise<{ subscription: Subscription; addOn: SubscriptionAddOn }> {
    await this.subscriptions.get(tenant, id, tx);
    const addOn = await this.catalog.addOn(tenant, addonId);
    const subscription = await this.change(tx, tenant, id, (current, now) => addAddOn(current, addOn, quantity ?? 1, now));
    return { subscription, addOn: subscription.addOns.find((item) => item.addonId === addonId)! };
  }

  async updateAddOn(tx: Tx, tenant: TenantRef, id: string, addonId: string, quantity: number): Promise<{ subscription: Subscription; addOn: SubscriptionAddOn }> {
    const subscription = await this.change(tx, tenant, id, (current, now) => updateAddOn(current, addonId, quantity, now));
    return { subscription, addOn: subscription.addOns.find((item) => item.addonId === addonId)! };
  }

  async removeAddOn(tx: Tx, tenant: TenantRef, id: string, addonId: string): Promise<{ subscription: Subscription; addOn: SubscriptionAddOn }> {
    const before = await this.subscriptions.getForUpdate(tx, tenant, id);
    const removed = before.addOns.find((item) => item.addonId === addonId);
    if (!removed) throw notFound('subscription add-on', addonId);
    const subscription = await this.change(tx, tenant, id, (current, now) => removeAddOn(current, addonId, now));
    return { subscription, addOn: removed };
  }

  private async save(tx: Tx, change: SubscriptionChange): Promise<Subscription> {
    await this.subscriptions.update(tx, change);
    return change.subscription;
  }

  private async change(tx: Tx, tenant: TenantRef, id: string, rule: (subscription: Subscription, now: Date) => SubscriptionChange): Promise<Subscription> {
    const subscription = await this.subscriptions.getForUpdate(tx, tenant, id);
    const change = rule(subscription, await this.clocks.timeOf(tx, subscription.testClockId));
    await this.subscriptions.update(tx, change);
    return change.subscription;
  }
}
