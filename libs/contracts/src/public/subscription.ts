import { fromInt64 } from '@recur/money';
import type { PriceSnapshot, Subscription, SubscriptionAddon, SubscriptionDiscount, TestClock, UpcomingInvoice } from '../gen/recur/subscription/v1/subscription_pb';
import { type PlanTierJson, presentPlanTier } from './plan';
import { presentTaxAmount, type TaxAmountJson } from './tax-rate';

/** The statuses of a subscription (docs/api/subscriptions.md#the-state-machine). */
export const SUBSCRIPTION_STATUS_VALUES = ['trialing', 'active', 'paused', 'past_due', 'cancelled', 'completed'] as const;

/** A price component as sold with a subscription (its snapshot). */
export interface SubscriptionPriceComponentJson {
  id: string;
  type: string;
  name: string;
  metric_name: string | null;
  unit_amount: number;
  included_quantity: number;
  /** The plan's limit of the metric per period (metered); null for none. */
  usage_limit: number | null;
}

/** What a subscription was sold at: the plan's pricing then; later plan edits do not change it. */
export interface SubscriptionPriceJson {
  plan_name: string;
  pricing_model: string;
  amount_monthly: number;
  currency: string;
  package_size: number;
  tiers: PlanTierJson[];
  price_components: SubscriptionPriceComponentJson[];
}

/**
 * The public JSON of a subscription: what `/v1/subscriptions` answers and what subscription.*
 * events carry in `data.object`. Times are unix seconds; absent ones are null.
 */
export interface SubscriptionJson {
  id: string;
  object: 'subscription';
  livemode: boolean;
  customer: string;
  plan: string;
  status: string;
  billing_interval: string;
  quantity: number;
  price: SubscriptionPriceJson;
  current_period_start: number;
  current_period_end: number;
  trial_start: number | null;
  trial_end: number | null;
  cancel_at_period_end: boolean;
  cancelled_at: number | null;
  ended_at: number | null;
  paused_at: number | null;
  resume_at: number | null;
  billing_cycles: number | null;
  collection_method: string;
  periods_billed: number;
  reactivated_from: string | null;
  test_clock: string | null;
  metadata: Record<string, string>;
  created: number;
  updated: number;
  add_ons: SubscriptionAddonJson[];
  discount: SubscriptionDiscountJson | null;
  pending_change: PendingChangeJson | null;
}

/** An add-on a subscription carries, at the price it was attached at. */
export interface SubscriptionAddonJson {
  object: 'subscription_addon';
  addon: string;
  name: string;
  quantity: number;
  price_monthly: number;
  currency: string;
  added: number;
}

/** The coupon discounting a subscription's period invoices. */
export interface SubscriptionDiscountJson {
  object: 'discount';
  coupon: string;
  coupon_name: string;
  type: string;
  value: number;
  currency: string | null;
  duration: string;
  duration_in_periods: number | null;
  periods_remaining: number | null;
  promotion_code: string;
  promotion_code_text: string;
  start: number;
}

/** A plan or quantity change the billing clock applies when the next period begins. */
export interface PendingChangeJson {
  plan: string;
  quantity: number;
  price: SubscriptionPriceJson;
  effective_at: number;
  requested: number;
}

/** One line of an upcoming invoice. */
export interface UpcomingInvoiceLineJson {
  kind: string;
  description: string;
  quantity: number;
  amount: number;
  /** The period the line covers, as the invoice line will carry it (usage: the period it was used in); null for a proration. */
  period: { start: number; end: number } | null;
  /** The line's tax, as the invoice line will carry it. */
  tax_amounts: TaxAmountJson[];
}

/** What a subscription's next period invoice will bill (GET /v1/subscriptions/:id/upcoming-invoice). */
export interface UpcomingInvoiceJson {
  object: 'upcoming_invoice';
  subscription: string;
  customer: string;
  currency: string;
  billing_reason: string;
  period_start: number;
  period_end: number;
  lines: UpcomingInvoiceLineJson[];
  subtotal: number;
  discount: number;
  /** The tax per rate, tax, total and total_excluding_tax, as the invoice will have them (docs/api/invoices.md#tax-and-rounding). */
  total_tax_amounts: TaxAmountJson[];
  tax: number;
  total: number;
  total_excluding_tax: number;
  customer_tax_exempt: string;
  /** The customer's balance before the invoice consumes credit (negative: credit), after, and what it will ask for (docs/api/customer-balance.md#invoices-consume-credit). */
  starting_balance: number;
  ending_balance: number;
  amount_due: number;
}

const seconds = (value: bigint | undefined): number | null => (value === undefined ? null : Number(value));

function presentPrice(price: PriceSnapshot | undefined): SubscriptionPriceJson {
  return {
    plan_name: price?.planName ?? '',
    pricing_model: price?.pricingModel ?? '',
    amount_monthly: fromInt64(price?.amountMonthly?.amountMinor ?? 0n, 'amount_monthly'),
    currency: price?.amountMonthly?.currency ?? '',
    package_size: price?.packageSize ?? 1,
    tiers: (price?.tiers ?? []).map(presentPlanTier),
    price_components: (price?.components ?? []).map((component) => ({
      id: component.id,
      type: component.type,
      name: component.name,
      metric_name: component.metricName ?? null,
      unit_amount: fromInt64(component.unitAmount, 'unit_amount'),
      included_quantity: fromInt64(component.includedQuantity, 'included_quantity'),
      usage_limit: component.usageLimit === undefined ? null : fromInt64(component.usageLimit, 'usage_limit'),
    })),
  };
}

export function presentSubscriptionAddon(addOn: SubscriptionAddon): SubscriptionAddonJson {
  return {
    object: 'subscription_addon',
    addon: addOn.addonId,
    name: addOn.name,
    quantity: addOn.quantity,
    price_monthly: fromInt64(addOn.priceMonthly?.amountMinor ?? 0n, 'price_monthly'),
    currency: addOn.priceMonthly?.currency ?? '',
    added: Number(addOn.added),
  };
}

function presentDiscount(discount: SubscriptionDiscount): SubscriptionDiscountJson {
  return {
    object: 'discount',
    coupon: discount.couponId,
    coupon_name: discount.couponName,
    type: discount.type,
    value: discount.value,
    currency: discount.currency ?? null,
    duration: discount.duration,
    duration_in_periods: discount.durationInPeriods ?? null,
    periods_remaining: discount.periodsRemaining ?? null,
    promotion_code: discount.promotionCodeId,
    promotion_code_text: discount.promotionCode,
    start: Number(discount.start),
  };
}

export function presentUpcomingInvoice(invoice: UpcomingInvoice): UpcomingInvoiceJson {
  return {
    object: 'upcoming_invoice',
    subscription: invoice.subscriptionId,
    customer: invoice.customerId,
    currency: invoice.currency,
    billing_reason: invoice.billingReason,
    period_start: Number(invoice.periodStart),
    period_end: Number(invoice.periodEnd),
    lines: invoice.lines.map((line) => ({
      kind: line.kind,
      description: line.description,
      quantity: Number(line.quantity),
      amount: Number(line.amount),
      period: line.periodStart === 0n && line.periodEnd === 0n ? null : { start: Number(line.periodStart), end: Number(line.periodEnd) },
      tax_amounts: line.taxAmounts.map(presentTaxAmount),
    })),
    subtotal: Number(invoice.subtotal),
    discount: Number(invoice.discount),
    total_tax_amounts: invoice.totalTaxAmounts.map(presentTaxAmount),
    tax: Number(invoice.tax),
    total: Number(invoice.total),
    // A subscription service older than tax sends none: the total has no tax in it.
    total_excluding_tax: invoice.customerTaxExempt === '' ? Number(invoice.total) : Number(invoice.totalExcludingTax),
    customer_tax_exempt: invoice.customerTaxExempt || 'none',
    // A subscription service older than balance previews sends none: no credit shown, the total due.
    starting_balance: Number(invoice.startingBalance ?? 0n),
    ending_balance: Number(invoice.endingBalance ?? 0n),
    amount_due: invoice.amountDue === undefined ? Math.max(Number(invoice.total), 0) : Number(invoice.amountDue),
  };
}

export function presentSubscription(subscription: Subscription): SubscriptionJson {
  return {
    id: subscription.id,
    object: 'subscription',
    livemode: subscription.livemode,
    customer: subscription.customerId,
    plan: subscription.planId,
    status: subscription.status,
    billing_interval: subscription.billingInterval,
    quantity: subscription.quantity,
    price: presentPrice(subscription.price),
    current_period_start: Number(subscription.currentPeriodStart),
    current_period_end: Number(subscription.currentPeriodEnd),
    trial_start: seconds(subscription.trialStart),
    trial_end: seconds(subscription.trialEnd),
    cancel_at_period_end: subscription.cancelAtPeriodEnd,
    cancelled_at: seconds(subscription.cancelledAt),
    ended_at: seconds(subscription.endedAt),
    paused_at: seconds(subscription.pausedAt),
    resume_at: seconds(subscription.resumeAt),
    billing_cycles: subscription.billingCycles ?? null,
    collection_method: subscription.collectionMethod || 'send_invoice',
    periods_billed: subscription.periodsBilled,
    reactivated_from: subscription.reactivatedFrom ?? null,
    test_clock: subscription.testClockId ?? null,
    metadata: { ...subscription.metadata },
    created: Number(subscription.created),
    updated: Number(subscription.updated),
    add_ons: subscription.addOns.map(presentSubscriptionAddon),
    discount: subscription.discount ? presentDiscount(subscription.discount) : null,
    pending_change: subscription.pendingChange
      ? {
          plan: subscription.pendingChange.planId,
          quantity: subscription.pendingChange.quantity,
          price: presentPrice(subscription.pendingChange.price),
          effective_at: Number(subscription.pendingChange.effectiveAt),
          requested: Number(subscription.pendingChange.requested),
        }
      : null,
  };
}

/** The public JSON of a sandbox test clock. */
export interface TestClockJson {
  id: string;
  object: 'test_clock';
  livemode: false;
  name: string;
  frozen_time: number;
  status: string;
  created: number;
  deleted: boolean;
}

export function presentTestClock(clock: TestClock): TestClockJson {
  return {
    id: clock.id,
    object: 'test_clock',
    livemode: false,
    name: clock.name,
    frozen_time: Number(clock.frozenTime),
    status: clock.status,
    created: Number(clock.created),
    deleted: clock.deletedAt !== undefined,
  };
}
