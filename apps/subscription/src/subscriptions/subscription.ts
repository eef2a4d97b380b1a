import { checkMetadata, DomainError, failedPrecondition, invalidArgument, type Metadata, newId, type TenantRef, unixSeconds } from '@recur/kernel';
import { type AppliedDiscount, appliedDiscountOf, BILLING_INTERVALS, type BillingInterval, pricePeriod, type PeriodPrice, type PricedAddOn, type PricedPlan, type UsageCharge, unusedTimeCredits } from '@recur/pricing';
import { COLLECTION_METHODS, type CollectionMethod, DEFAULT_COLLECTION_METHOD, isCollectionMethod } from '@recur/vocabulary';
import { DAY_MS, periodOf } from './billing-period';
import { afterBilledPeriod, couponOfNextInvoice, type Discount } from './discount';

/**
 * The subscription aggregate and its state machine (docs/api/subscriptions.md):
 *
 *   trialing ─trial ends─▶ active ─renewal─▶ active (new period)
 *   active ─pause─▶ paused ─resume / resume_at─▶ active (new period)
 *   trialing | active | paused | past_due ─cancel─▶ cancelled ─reactivate─▶ (a new subscription)
 *   active ─last billing cycle ends─▶ completed
 *   active ─final dunning reminder unpaid─▶ past_due ─invoice paid─▶ active
 *
 * Every function takes the subscription and the time of the move (the subscription's own
 * time: its customer's test clock, or real time) and returns the changed subscription with
 * the events it recorded and, when a period begins, the invoice that period raises.
 */
export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'paused', 'past_due', 'cancelled', 'completed'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Subscription {
  id: string;
  tenant: TenantRef;
  customerId: string;
  planId: string;
  status: SubscriptionStatus;
  billingInterval: BillingInterval;
  quantity: number;
  /** The plan's pricing when sold; renewals and previews price from it, not from the live plan. */
  price: PricedPlan;
  cycleAnchor: Date;
  cycleIndex: number;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  trialStart: Date | null;
  trialEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  cancelledAt: Date | null;
  endedAt: Date | null;
  pausedAt: Date | null;
  resumeAt: Date | null;
  billingCycles: number | null;
  periodsBilled: number;
  /** How its invoices are collected: `send_invoice` (a payment link) or `charge_automatically`. */
  collectionMethod: CollectionMethod;
  reactivatedFrom: string | null;
  testClockId: string | null;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  /** Add-ons it carries, each at the price it was attached at. */
  addOns: SubscriptionAddOn[];
  /** The coupon discounting its period invoices, or null. */
  discount: Discount | null;
  /** A plan or quantity change that applies when the next period begins, or null. */
  pendingChange: PendingChange | null;
  /** Prorations (and carried credit) the next period invoice bills, in the order they arose. */
  pendingItems: PendingItem[];
  /**
   * The discount the invoice of the period starting `periodStart` applied (its coupon's amount
   * and the charges it spread it over), which a cancellation with `prorate` credits back in
   * proportion. Null, or another period's (written before it was kept, or by an older replica
   * mid-rollout): the unused time is credited undiscounted.
   */
  periodDiscount: PeriodDiscount | null;
}

/** What a period invoice took off with its coupon, and which period that was (unix seconds of its start). */
export interface PeriodDiscount extends AppliedDiscount {
  periodStart: number;
}

export interface SubscriptionAddOn {
  addonId: string;
  name: string;
  /** Per unit and month, in the plan's currency (minor units), as when attached. */
  priceMonthly: number;
  quantity: number;
  addedAt: Date;
  /** The tax rates the add-on named when attached (its lines carry them); absent: none. */
  taxRateIds?: string[];
}

export interface PendingChange {
  planId: string;
  price: PricedPlan;
  quantity: number;
  /** When it applies: the end of the period (or trial) it was requested in. */
  effectiveAt: Date;
  requestedAt: Date;
}

/** A one-time amount for the next period invoice: a proration (credit < 0, charge > 0) or carried credit. */
export interface PendingItem {
  description: string;
  amount: number;
  /** The tax rates of the plan or add-on it prorates; absent: the plan's (items written before they were kept). */
  taxRateIds?: string[];
}

/**
 * The fields a subscription.updated may name as changed. The specification's public
 * `subscription.updated` means plan or quantity changed, or the end set or kept
 * (PUBLIC_UPDATE_FIELDS); the others are published as the internal SubscriptionUpdated only.
 */
export type SubscriptionChangedField = 'cancel_at_period_end' | 'plan' | 'price' | 'quantity' | 'billing_interval' | 'pending_change' | 'add_ons' | 'discount';
export const PUBLIC_UPDATE_FIELDS: readonly SubscriptionChangedField[] = ['cancel_at_period_end', 'plan', 'price', 'quantity', 'billing_interval'];

export type SubscriptionEvent =
  | { kind: 'created'; subscription: Subscription }
  | { kind: 'updated'; subscription: Subscription; previous: Subscription; changedFields: SubscriptionChangedField[] }
  | { kind: 'trial_extended'; subscription: Subscription; previousTrialEnd: Date }
  | { kind: 'activated'; subscription: Subscription }
  | { kind: 'paused'; subscription: Subscription }
  | { kind: 'resumed'; subscription: Subscription }
  | { kind: 'cancelled'; subscription: Subscription }
  | { kind: 'completed'; subscription: Subscription }
  | { kind: 'past_due'; subscription: Subscription; invoiceId: string }
  | { kind: 'reactivated'; subscription: Subscription };

/** Why a period invoice is raised; a subscription sold through a sales link raises its first one as `sales_link`. */
export type BillingReason = 'subscription_create' | 'subscription_cycle' | 'subscription_update' | 'sales_link' | 'subscription_final';

/** One billed period: what the invoicing service is asked to raise, priced by @recur/pricing. */
export interface PeriodInvoice {
  periodStart: Date;
  periodEnd: Date;
  billingReason: BillingReason;
  price: PeriodPrice;
  /** A final invoice's credit (a total below 0) is refunded to the payer of the period's invoice, not kept as balance (`refund: true` on a cancellation). */
  refundCredit?: boolean;
}

/** An engine line's kind as invoices name it: `plan`, `usage` (metered), `addon` or `proration`. */
export function invoiceLineKind(line: PeriodPrice['lines'][number]): 'plan' | 'usage' | 'addon' | 'proration' {
  if (line.kind === 'addon') return 'addon';
  if (line.kind === 'adjustment') return 'proration';
  return line.metricName ? 'usage' : 'plan';
}

/**
 * The period (unix seconds) an invoice line covers: a usage line its own (usage is billed in
 * arrears, late usage of an earlier period), a proration none (its description names it), any
 * other line the invoice's period.
 */
export function invoiceLinePeriod(kind: string, own: { start: number; end: number } | undefined, invoicePeriod: { start: number; end: number }): { start: number; end: number } | null {
  if (own) return own;
  return kind === 'proration' ? null : invoicePeriod;
}

/** A subscription after a change: its events, the invoice of a period that began, and the final invoice of one that ended it. */
export interface SubscriptionChange {
  subscription: Subscription;
  events: SubscriptionEvent[];
  invoice?: PeriodInvoice;
  finalInvoice?: PeriodInvoice;
}

/** The time-driven step the billing clock holds for a subscription, if any. */
export interface LifecycleStep {
  kind: 'end_trial' | 'renew' | 'resume';
  runAt: Date;
}

export const QUANTITY_MAX = 1_000_000;
export const TRIAL_DAYS_MAX = 730;
export const BILLING_CYCLES_MAX = 1_000;

export const ADD_ONS_MAX = 20;

/** A state-machine refusal: 409 with a code that names the state. */
export const wrongState = (code: string, message: string) => failedPrecondition(code, message);

export interface NewSubscription {
  customerId: string;
  planId: string;
  price: PricedPlan;
  planIntervals: readonly string[];
  billingInterval: string;
  quantity?: number;
  trialDays?: number;
  trialEnd?: Date;
  billingCycles?: number;
  /** `send_invoice` (also when absent) or `charge_automatically`. */
  collectionMethod?: string;
  metadata?: Metadata;
  testClockId: string | null;
  /** On-sale add-ons read from the catalog, with the quantities asked for. */
  addOns?: { addOn: CatalogAddOn; quantity?: number }[];
  /** A coupon already redeemed for this subscription. */
  discount?: Discount | null;
  /** The first invoice's billing_reason (default `subscription_create`; `sales_link` for a sale through a link). */
  firstInvoiceReason?: Extract<BillingReason, 'subscription_create' | 'sales_link'>;
}

/** An add-on as the catalog sells it. */
export interface CatalogAddOn {
  id: string;
  name: string;
  priceMonthly: number;
  currency: string;
  onSale: boolean;
  /** The tax rates the add-on names; empty: none. */
  taxRateIds: string[];
}

export function checkInterval(interval: string, offered: readonly string[]): BillingInterval {
  if (!(BILLING_INTERVALS as string[]).includes(interval)) {
    throw invalidArgument('billing_interval', `billing_interval must be one of ${BILLING_INTERVALS.join(', ')}`);
  }
  if (!offered.includes(interval)) throw invalidArgument('billing_interval', `The plan is not sold ${interval}; it offers ${offered.join(', ')}.`);
  return interval as BillingInterval;
}

export function checkQuantity(quantity: number, param = 'quantity'): number {
  if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > QUANTITY_MAX) throw invalidArgument(param, `${param} must be an integer from 1 to ${QUANTITY_MAX}`);
  return quantity;
}

/** An add-on as the subscription carries it, refused unless on sale and in the plan's currency. */
export function attachAddOn(addOn: CatalogAddOn, quantity: number, currency: string, at: Date, param = 'addon'): SubscriptionAddOn {
  if (!addOn.onSale) throw invalidArgument(param, `Add-on '${addOn.id}' is off sale and cannot be attached.`, 'addon_off_sale');
  if (addOn.currency !== currency) throw invalidArgument(param, `Add-on '${addOn.id}' is priced in ${addOn.currency}; the subscription bills in ${currency}.`);
  return {
    addonId: addOn.id,
    name: addOn.name,
    priceMonthly: addOn.priceMonthly,
    quantity: checkQuantity(quantity, param === 'addon' ? 'quantity' : `${param}.quantity`),
    addedAt: at,
    ...(addOn.taxRateIds.length > 0 ? { taxRateIds: [...addOn.taxRateIds] } : {}),
  };
}

function trialEndOf(fields: NewSubscription, now: Date): Date | null {
  if (fields.trialDays !== undefined && fields.trialEnd !== undefined) throw invalidArgument('trial_end', 'Give trial_days or trial_end, not both.');
  if (fields.trialDays !== undefined) {
    if (!Number.isSafeInteger(fields.trialDays) || fields.trialDays < 1 || fields.trialDays > TRIAL_DAYS_MAX) {
      throw invalidArgument('trial_days', `trial_days must be an integer from 1 to ${TRIAL_DAYS_MAX}`);
    }
    return new Date(now.getTime() + fields.trialDays * DAY_MS);
  }
  if (fields.trialEnd !== undefined) {
    if (fields.trialEnd.getTime() <= now.getTime()) throw invalidArgument('trial_end', 'trial_end must be in the future.');
    if (fields.trialEnd.getTime() > now.getTime() + TRIAL_DAYS_MAX * DAY_MS) throw invalidArgument('trial_end', `trial_end must be within ${TRIAL_DAYS_MAX} days.`);
    return fields.trialEnd;
  }
  return null;
}

/**
 * Usage an invoice bills in arrears, as usage-metering measured it (GetPeriodUsage): per metric
 * and usage period — the period that ended, and late records of periods billed before
 * (docs/api/usage.md#billing-in-arrears). Empty when the plan meters nothing or the move bills no closed period.
 */
export interface UsageLine {
  metricName: string;
  period: { start: Date; end: Date };
  /** Units to bill now. */
  quantity: number;
  /** Units of the same period and metric that earlier invoices billed. */
  billedBefore: number;
  /** The period was invoiced already; these units arrived after. */
  late: boolean;
  /** The interval the period ran on (its included quantity's months); absent or null: unknown, the invoice's. */
  interval?: BillingInterval | null;
}
export type PeriodUsage = UsageLine[];

/** The metrics a price snapshot meters (its metered components' metric names). */
export const meteredMetrics = (price: PricedPlan): string[] =>
  price.components.flatMap((component) => (component.type === 'metered' && component.metricName ? [component.metricName] : []));

/** The usage of one period an invoice bills: the period, the interval it ran on, the metrics the price meters, and the billing key recorded in usage-metering. */
export interface UsageToBill {
  period: { start: Date; end: Date };
  billingInterval: BillingInterval;
  metricNames: string[];
  billingKey: string;
}

/**
 * A period is billed once, by whichever move ends it (a renewal, the clock's or the API's
 * resume, the end of the subscription): keyed by the period, a repeat or a racing move is
 * answered the same usage. One key per period (not a second `final` key) also means a move that
 * measured the usage and then rolled back leaves nothing unbilled: the move that does end the
 * period is answered that measure, and what came after it is billed late (docs/api/usage.md).
 */
const periodBillingKey = (subscription: Subscription): string => `usage:${subscription.id}:${unixSeconds(subscription.currentPeriodStart)}`;

/**
 * The period whose usage the subscription's next move bills, with the metrics its price
 * meters: a renewal bills the period that ends, a resume the period the pause interrupted, and
 * a move that ends the subscription at its period's end (set to end, last billing cycle) the
 * ended period, on its final invoice. A trial's usage is free (a trial is not invoiced): null
 * then, and null when the plan meters nothing.
 */
export function usagePeriodToBill(subscription: Subscription): UsageToBill | null {
  const metricNames = meteredMetrics(subscription.price);
  if (metricNames.length === 0) return null;
  if (subscription.status !== 'active' && subscription.status !== 'past_due' && subscription.status !== 'paused') return null;
  return { period: { start: subscription.currentPeriodStart, end: subscription.currentPeriodEnd }, billingInterval: intervalOfCurrentPeriod(subscription), metricNames, billingKey: periodBillingKey(subscription) };
}

/**
 * The interval the current period ran on: the subscription's, except after an interval change
 * while paused, which leaves the period the pause interrupted as it was — recognised as the
 * interval whose cycle from the anchor gives its dates — so its usage, billed at the resume,
 * gets that interval's included quantity.
 */
function intervalOfCurrentPeriod(subscription: Subscription): BillingInterval {
  if (subscription.status !== 'paused') return subscription.billingInterval;
  const ranOn = (interval: BillingInterval) => {
    const { start, end } = periodOf(subscription.cycleAnchor, interval, subscription.cycleIndex);
    return start.getTime() === subscription.currentPeriodStart.getTime() && end.getTime() === subscription.currentPeriodEnd.getTime();
  };
  return ranOn(subscription.billingInterval) ? subscription.billingInterval : (BILLING_INTERVALS.find(ranOn) ?? subscription.billingInterval);
}

/**
 * The usage the final invoice of a subscription cancelled now (at `endAt`) bills: a running
 * period's up to `endAt`, a paused one's (the period the pause interrupted); none while
 * trialing, once ended, or when the plan meters nothing.
 */
export function finalUsageToBill(subscription: Subscription, endAt: Date): UsageToBill | null {
  const toBill = usagePeriodToBill(subscription);
  if (!toBill || subscription.status === 'paused') return toBill;
  return { ...toBill, period: finalPeriod(subscription, endAt) };
}

/**
 * The usage the invoice of a billing-interval change bills (docs/api/usage.md): the period the change
 * cuts short, up to `cutAt`, under the period's own billing key and on its own (old) interval's
 * included quantity — as a cancellation now bills it. None while trialing or paused (the change
 * starts no period then) or when the plan meters nothing.
 */
export function cutUsageToBill(subscription: Subscription, cutAt: Date): UsageToBill | null {
  if (subscription.status !== 'active' && subscription.status !== 'past_due') return null;
  return finalUsageToBill(subscription, cutAt);
}

/** The span a final invoice covers: the current period up to the end (at least a second: invoicing wants end > start). */
function finalPeriod(subscription: Subscription, endAt: Date): { start: Date; end: Date } {
  const start = subscription.currentPeriodStart;
  const end = subscription.status === 'paused' ? subscription.currentPeriodEnd : endAt;
  return { start, end: new Date(Math.max(end.getTime(), start.getTime() + 1000)) };
}

/**
 * Usage lines as the pricing engine takes them, each priced by the metered component of the
 * price it was used under (`usagePrice`: the ended period's, before a pending change applies).
 * A metric that price no longer meters is priced by the new one's component if it has one.
 */
function usageCharges(usage: PeriodUsage, usagePrice: PricedPlan, price: PricedPlan): UsageCharge[] {
  const componentOf = (metricName: string) =>
    [...usagePrice.components, ...price.components].find((component) => component.type === 'metered' && component.metricName === metricName);
  return usage.flatMap((line) => {
    const component = componentOf(line.metricName);
    if (!component) return [];
    return [{
      component,
      quantity: line.quantity,
      billedBefore: line.billedBefore,
      late: line.late,
      period: { start: unixSeconds(line.period.start), end: unixSeconds(line.period.end) },
      ...(line.interval ? { interval: line.interval } : {}),
    }];
  });
}

const pricedAddOns = (addOns: SubscriptionAddOn[]): PricedAddOn[] =>
  addOns.map((addOn) => ({ id: addOn.addonId, name: addOn.name, priceMonthly: addOn.priceMonthly, quantity: addOn.quantity, taxRateIds: addOn.taxRateIds }));

/**
 * THE price of a subscription's next period invoice — plan (from its snapshot), add-ons,
 * pending prorations and carried credit, the metered usage of the period that ended (in
 * arrears, priced at `usagePrice`), then the discount — by @recur/pricing.
 * Every period invoice (creation, trial end, renewal, resume, interval change) and the
 * upcoming-invoice preview are priced here and nowhere else.
 */
export function priceNextInvoice(subscription: Subscription, usage: PeriodUsage = [], usagePrice: PricedPlan = subscription.price): PeriodPrice {
  return pricePeriod({
    plan: subscription.price,
    quantity: subscription.quantity,
    interval: subscription.billingInterval,
    addOns: pricedAddOns(subscription.addOns),
    adjustments: subscription.pendingItems,
    coupon: couponOfNextInvoice(subscription.discount),
    usage: usageCharges(usage, usagePrice, subscription.price),
  });
}

/**
 * The credit for the unused time of the period the subscription paid in advance, from `now`
 * to its end (a cancellation with `prorate: true`, docs/api/subscriptions.md#final-invoice):
 * its current recurring lines (plan, tiers, fixed components per plan; each add-on) less the
 * discount the period's invoice applied, prorated to the second by @recur/pricing, each with
 * the tax rates of what it credits. Nothing while trialing or paused (no period was paid).
 */
export function unusedTimeItems(subscription: Subscription, now: Date): PendingItem[] {
  if (subscription.status !== 'active' && subscription.status !== 'past_due') return [];
  const span = { start: unixSeconds(subscription.currentPeriodStart), end: unixSeconds(subscription.currentPeriodEnd) };
  const day = now.toISOString().slice(0, 10);
  const nameOf = (addonId?: string) => (addonId ? subscription.addOns.find((addOn) => addOn.addonId === addonId)?.name ?? addonId : subscription.price.name);
  const discount = subscription.periodDiscount?.periodStart === span.start ? subscription.periodDiscount : null;
  return unusedTimeCredits(recurringLines(subscription), discount, span, unixSeconds(now)).map((credit) => ({
    description: `Unused time on ${nameOf(credit.addonId)} after ${day}`,
    amount: credit.amount,
    ...(credit.taxRateIds ? { taxRateIds: credit.taxRateIds } : {}),
  }));
}

/**
 * THE price of a subscription's final invoice (docs/api/subscriptions.md#final-invoice): what
 * its last period left unbilled — the pending prorations and carried credit (and, cancelled
 * with `prorate`, the unused time's credit), and the metered usage of the period (in arrears) —
 * by @recur/pricing, with the coupon the next invoice would take. No plan, add-on or fixed
 * line: those were billed in advance with the period. Credit beyond the charges is kept: the
 * total goes below 0 and invoicing turns it into customer balance (Stripe: a negative invoice
 * credits the customer's balance), so a downgrade's credit survives the end. The unused time's
 * credit (`unusedTime`) comes after the discount: it is net of the period invoice's own
 * discount already, and the coupon discounts the charges only.
 */
export function priceFinalInvoice(subscription: Subscription, usage: PeriodUsage, unusedTime: PendingItem[] = []): PeriodPrice {
  const usageOnly: PricedPlan = {
    ...subscription.price,
    pricingModel: 'flat_rate',
    amountMonthly: 0,
    tiers: [],
    components: subscription.price.components.filter((component) => component.type === 'metered'),
  };
  const price = pricePeriod({
    plan: usageOnly,
    quantity: subscription.quantity,
    interval: subscription.billingInterval,
    adjustments: subscription.pendingItems,
    coupon: couponOfNextInvoice(subscription.discount),
    usage: usageCharges(usage, subscription.price, subscription.price),
    creditBeyondCharges: 'keep',
  });
  // The zero plan line stands for nothing billed.
  const lines = price.lines.filter((line) => line.kind !== 'plan');
  const credits = unusedTime.map((item): PeriodPrice['lines'][number] => ({
    kind: 'adjustment', description: item.description, quantity: 1, unitAmount: item.amount, flatAmount: 0, amount: item.amount, ...(item.taxRateIds ? { taxRateIds: [...item.taxRateIds] } : {}),
  }));
  const subtotal = price.subtotal + credits.reduce((total, line) => total + line.amount, 0);
  return { ...price, lines: [...lines, ...credits], subtotal, total: subtotal - price.discount };
}

/**
 * The final invoice of a subscription ending at `endAt`, or none when nothing is left to bill
 * or credit (every line 0: no usage beyond what is included, no pending charge or credit).
 */
export function finalInvoiceOf(subscription: Subscription, endAt: Date, usage: PeriodUsage, unusedTime: PendingItem[] = []): PeriodInvoice | undefined {
  const price = priceFinalInvoice(subscription, usage, unusedTime);
  if (!price.lines.some((line) => line.amount !== 0)) return undefined;
  const { start, end } = finalPeriod(subscription, endAt);
  return { periodStart: start, periodEnd: end, billingReason: 'subscription_final', price };
}

/** The recurring lines of one period at the subscription's current terms (no prorations, no discount): what proration scales. */
export function recurringLines(subscription: Pick<Subscription, 'price' | 'quantity' | 'billingInterval' | 'addOns'>): PeriodPrice['lines'] {
  return pricePeriod({ plan: subscription.price, quantity: subscription.quantity, interval: subscription.billingInterval, addOns: pricedAddOns(subscription.addOns) }).lines;
}

export const CREDIT_CARRIED_IN_DESCRIPTION = 'Credit carried from the previous invoice';

/**
 * Bills the period the subscription is now in: prices it (priceNextInvoice) and consumes
 * what that invoice took — the pending items (credit it could not use carries on) and one
 * period of the discount.
 */
function billCurrentPeriod(subscription: Subscription, billingReason: BillingReason, usage: PeriodUsage = [], usagePrice: PricedPlan = subscription.price): { subscription: Subscription; invoice: PeriodInvoice } {
  const price = priceNextInvoice(subscription, usage, usagePrice);
  const billed: Subscription = {
    ...subscription,
    pendingItems: price.creditCarried > 0 ? [{ description: CREDIT_CARRIED_IN_DESCRIPTION, amount: -price.creditCarried }] : [],
    discount: afterBilledPeriod(subscription.discount),
    periodDiscount: { ...appliedDiscountOf(price), periodStart: unixSeconds(subscription.currentPeriodStart) },
  };
  return { subscription: billed, invoice: { periodStart: subscription.currentPeriodStart, periodEnd: subscription.currentPeriodEnd, billingReason, price } };
}

/** A new period starts at `at`: the anchor moves there. */
function startPeriodsAt(subscription: Subscription, at: Date): Subscription {
  const { start, end } = periodOf(at, subscription.billingInterval, 0);
  return { ...subscription, cycleAnchor: at, cycleIndex: 0, currentPeriodStart: start, currentPeriodEnd: end, periodsBilled: subscription.periodsBilled + 1 };
}

/** The fields a pending change alters, named for subscription.updated. */
function changedTerms(before: { planId: string; quantity: number }, after: { planId: string; quantity: number }): SubscriptionChangedField[] {
  return [...(before.planId !== after.planId ? (['plan', 'price'] as const) : []), ...(before.quantity !== after.quantity ? (['quantity'] as const) : [])];
}

/**
 * A period begins: a pending change applies first (its own subscription.updated), then the
 * period (`place` sets its dates) is billed with `billingReason`.
 */
function beginPeriod(
  subscription: Subscription,
  place: (subscription: Subscription) => Subscription,
  billingReason: BillingReason,
  now: Date,
  usage: PeriodUsage = [],
): { subscription: Subscription; invoice: PeriodInvoice; update: ((final: Subscription) => SubscriptionEvent) | null } {
  const change = subscription.pendingChange;
  const changed: Subscription = change ? { ...subscription, planId: change.planId, price: change.price, quantity: change.quantity, pendingChange: null } : subscription;
  // The ended period's usage is priced as it was sold then, before the change.
  const { subscription: billed, invoice } = billCurrentPeriod({ ...place(changed), updatedAt: now }, billingReason, usage, subscription.price);
  const update = change && changedTerms(subscription, changed).length > 0
    ? (final: Subscription): SubscriptionEvent => ({ kind: 'updated', subscription: final, previous: subscription, changedFields: changedTerms(subscription, changed) })
    : null;
  return { subscription: billed, invoice, update };
}

/** Absent or empty: `send_invoice`, as Stripe's default; the method travels to every invoice the subscription raises. */
function checkCollectionMethod(value: string | undefined): CollectionMethod {
  if (value === undefined || value === '') return DEFAULT_COLLECTION_METHOD;
  if (!isCollectionMethod(value)) throw invalidArgument('collection_method', `collection_method must be one of ${COLLECTION_METHODS.join(', ')}`);
  return value;
}

export function createSubscription(tenant: TenantRef, fields: NewSubscription, now: Date): SubscriptionChange {
  const billingInterval = checkInterval(fields.billingInterval, fields.planIntervals);
  const quantity = checkQuantity(fields.quantity ?? 1);
  const trialEnd = trialEndOf(fields, now);
  if (fields.billingCycles !== undefined && (!Number.isSafeInteger(fields.billingCycles) || fields.billingCycles < 1 || fields.billingCycles > BILLING_CYCLES_MAX)) {
    throw invalidArgument('billing_cycles', `billing_cycles must be an integer from 1 to ${BILLING_CYCLES_MAX}`);
  }
  const base: Subscription = {
    id: newId('sub'),
    tenant,
    customerId: fields.customerId,
    planId: fields.planId,
    status: trialEnd ? 'trialing' : 'active',
    billingInterval,
    quantity,
    price: fields.price,
    cycleAnchor: now,
    cycleIndex: 0,
    currentPeriodStart: now,
    currentPeriodEnd: trialEnd ?? now,
    trialStart: trialEnd ? now : null,
    trialEnd,
    cancelAtPeriodEnd: false,
    cancelledAt: null,
    endedAt: null,
    pausedAt: null,
    resumeAt: null,
    billingCycles: fields.billingCycles ?? null,
    periodsBilled: 0,
    collectionMethod: checkCollectionMethod(fields.collectionMethod),
    reactivatedFrom: null,
    testClockId: fields.testClockId,
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    addOns: checkNewAddOns(fields.addOns ?? [], fields.price.currency, now),
    discount: fields.discount ?? null,
    pendingChange: null,
    pendingItems: [],
    periodDiscount: null,
  };
  // Price once now, so a plan the engine cannot price is refused at sale, not at renewal.
  priceNextInvoice(base);
  if (trialEnd) return { subscription: base, events: [{ kind: 'created', subscription: base }] };
  const { subscription, invoice } = billCurrentPeriod(startPeriodsAt(base, now), fields.firstInvoiceReason ?? 'subscription_create');
  return { subscription, events: [{ kind: 'created', subscription }], invoice };
}

function checkNewAddOns(addOns: { addOn: CatalogAddOn; quantity?: number }[], currency: string, at: Date): SubscriptionAddOn[] {
  if (addOns.length > ADD_ONS_MAX) throw invalidArgument('add_ons', `a subscription carries at most ${ADD_ONS_MAX} add-ons`);
  const seen = new Set<string>();
  return addOns.map(({ addOn, quantity }, index) => {
    if (seen.has(addOn.id)) throw invalidArgument(`add_ons[${index}].addon`, `Add-on '${addOn.id}' is listed twice.`);
    seen.add(addOn.id);
    return attachAddOn(addOn, quantity ?? 1, currency, at, `add_ons[${index}].addon`);
  });
}

const isEnded = (subscription: Subscription) => subscription.status === 'cancelled' || subscription.status === 'completed';

function assertNotEnded(subscription: Subscription): void {
  if (subscription.status === 'cancelled') throw wrongState('subscription_cancelled', `Subscription '${subscription.id}' is cancelled.`);
  if (subscription.status === 'completed') throw wrongState('subscription_completed', `Subscription '${subscription.id}' is completed.`);
}

/**
 * Ends it now (any running state). What its period left unbilled — pending prorations, and
 * `usage` (finalUsageToBill, measured by the caller) — goes on a final invoice raised now; with
 * `prorate`, so does the credit for the unused time of the period paid in advance
 * (unusedTimeItems), and a total below 0 becomes the customer's balance (invoicing) — or, with
 * `refund`, is refunded to the payer of the period's invoice as far as it was paid (payments).
 */
export function cancelNow(subscription: Subscription, now: Date, usage: PeriodUsage = [], options: { prorate?: boolean; refund?: boolean } = {}): SubscriptionChange {
  assertNotEnded(subscription);
  const final = finalInvoiceOf(subscription, now, usage, options.prorate ? unusedTimeItems(subscription, now) : []);
  const finalInvoice = final && options.refund ? { ...final, refundCredit: true } : final;
  const cancelled: Subscription = { ...subscription, status: 'cancelled', cancelledAt: now, endedAt: now, resumeAt: null, pendingChange: null, pendingItems: [], updatedAt: now };
  return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }], finalInvoice };
}

/** Sets the end at the current period's end (the trial's end while trialing). */
export function cancelAtPeriodEnd(subscription: Subscription, now: Date): SubscriptionChange {
  assertNotEnded(subscription);
  if (subscription.status === 'paused') throw wrongState('subscription_paused', `Subscription '${subscription.id}' is paused: it has no period to end; cancel it now or resume it first.`);
  if (subscription.cancelAtPeriodEnd) throw wrongState('subscription_cancel_scheduled', `Subscription '${subscription.id}' already ends at its period's end.`);
  const updated: Subscription = { ...subscription, cancelAtPeriodEnd: true, cancelledAt: now, updatedAt: now };
  return { subscription: updated, events: [{ kind: 'updated', subscription: updated, previous: subscription, changedFields: ['cancel_at_period_end'] }] };
}

export function pause(subscription: Subscription, resumeAt: Date | null, now: Date): SubscriptionChange {
  if (subscription.status !== 'active') throw wrongState('subscription_not_active', `Only an active subscription can be paused; '${subscription.id}' is ${subscription.status}.`);
  if (subscription.pendingChange) throw wrongState('subscription_pending_change', `Subscription '${subscription.id}' has a change pending at its period's end; cancel it (DELETE …/pending-change) before pausing.`);
  // A pause has no period end to end at: dropping the scheduled end silently would bill on after the resume.
  if (subscription.cancelAtPeriodEnd) {
    throw wrongState('subscription_cancel_scheduled', `Subscription '${subscription.id}' ends at its period's end; keep it (POST …/reactivate) before pausing, or cancel it now.`);
  }
  if (resumeAt && resumeAt.getTime() <= now.getTime()) throw invalidArgument('resume_at', 'resume_at must be in the future.');
  const paused: Subscription = { ...subscription, status: 'paused', pausedAt: now, resumeAt, updatedAt: now };
  return { subscription: paused, events: [{ kind: 'paused', subscription: paused }] };
}

/** Resumes a paused subscription at `at` (now, or its resume_at): a new period begins and is billed. */
export function resume(subscription: Subscription, at: Date, now: Date, usage: PeriodUsage = []): SubscriptionChange {
  if (subscription.status !== 'paused') throw wrongState('subscription_not_paused', `Only a paused subscription can be resumed; '${subscription.id}' is ${subscription.status}.`);
  const { subscription: resumed, invoice } = beginPeriod(subscription, (s) => ({ ...startPeriodsAt(s, at), status: 'active', pausedAt: null, resumeAt: null }), 'subscription_cycle', now, usage);
  return { subscription: resumed, events: [{ kind: 'resumed', subscription: resumed }], invoice };
}

/** Keeps a subscription that was set to end at its period's end. */
export function keep(subscription: Subscription, now: Date): SubscriptionChange {
  if (isEnded(subscription) || !subscription.cancelAtPeriodEnd) {
    throw wrongState('subscription_not_cancelled', `Only a cancelled subscription, or one set to end, can be reactivated; '${subscription.id}' is ${subscription.status}.`);
  }
  const kept: Subscription = { ...subscription, cancelAtPeriodEnd: false, cancelledAt: null, updatedAt: now };
  return { subscription: kept, events: [{ kind: 'updated', subscription: kept, previous: subscription, changedFields: ['cancel_at_period_end'] }] };
}

/** A cancelled subscription brought back as a new one: same customer, plan, price, quantity; a new period now. */
export function reactivate(old: Subscription, now: Date): SubscriptionChange {
  if (old.status !== 'cancelled') throw wrongState('subscription_not_cancelled', `Only a cancelled subscription can be reactivated; '${old.id}' is ${old.status}.`);
  const base: Subscription = {
    ...old,
    id: newId('sub'),
    status: 'active',
    trialStart: null,
    trialEnd: null,
    cancelAtPeriodEnd: false,
    cancelledAt: null,
    endedAt: null,
    pausedAt: null,
    resumeAt: null,
    periodsBilled: 0,
    reactivatedFrom: old.id,
    createdAt: now,
    updatedAt: now,
    // The add-ons come back with it; a coupon, pending change or prorations stay with the old one.
    discount: null,
    pendingChange: null,
    pendingItems: [],
  };
  const { subscription, invoice } = billCurrentPeriod(startPeriodsAt(base, now), 'subscription_create');
  return { subscription, events: [{ kind: 'reactivated', subscription }], invoice };
}

export function extendTrial(subscription: Subscription, trialEnd: Date, now: Date): SubscriptionChange {
  if (subscription.status !== 'trialing' || !subscription.trialEnd) {
    throw wrongState('subscription_not_trialing', `Only a trialing subscription's trial can be extended; '${subscription.id}' is ${subscription.status}.`);
  }
  if (trialEnd.getTime() <= subscription.trialEnd.getTime()) throw invalidArgument('trial_end', 'trial_end must be later than the current trial end.');
  if (trialEnd.getTime() > now.getTime() + TRIAL_DAYS_MAX * DAY_MS) throw invalidArgument('trial_end', `trial_end must be within ${TRIAL_DAYS_MAX} days.`);
  // A change pending at the trial's end moves with it.
  const pendingChange = subscription.pendingChange && { ...subscription.pendingChange, effectiveAt: trialEnd };
  const extended: Subscription = { ...subscription, trialEnd, currentPeriodEnd: trialEnd, pendingChange, updatedAt: now };
  return { subscription: extended, events: [{ kind: 'trial_extended', subscription: extended, previousTrialEnd: subscription.trialEnd }] };
}

/** The trial ends at `at` (its trial_end): the first paid period begins, or it ends if set to. */
export function endTrial(subscription: Subscription, at: Date, now: Date, usage: PeriodUsage = []): SubscriptionChange {
  if (subscription.status !== 'trialing') throw new DomainError('internal', 'step_stale', `Subscription '${subscription.id}' is not trialing.`);
  if (subscription.cancelAtPeriodEnd) {
    // A change pending at the end never applies: the subscription ends there.
    const cancelled: Subscription = { ...subscription, status: 'cancelled', endedAt: at, cancelAtPeriodEnd: false, pendingChange: null, updatedAt: now };
    return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }] };
  }
  const { subscription: active, invoice, update } = beginPeriod(subscription, (s) => ({ ...startPeriodsAt(s, at), status: 'active' }), 'subscription_cycle', now, usage);
  return { subscription: active, events: [...(update ? [update(active)] : []), { kind: 'activated', subscription: active }], invoice };
}

/**
 * The current period ended at `at`: the subscription ends if it was set to, completes if it
 * billed its last cycle, and otherwise renews into the next period, which is billed.
 */
export function renew(subscription: Subscription, at: Date, now: Date, usage: PeriodUsage = []): SubscriptionChange {
  if (subscription.status !== 'active' && subscription.status !== 'past_due') {
    throw new DomainError('internal', 'step_stale', `Subscription '${subscription.id}' is ${subscription.status}.`);
  }
  // Ending here: the ended period's usage and any pending prorations go on a final invoice.
  if (subscription.cancelAtPeriodEnd) {
    // A change pending at the end never applies: the subscription ends there.
    const cancelled: Subscription = { ...subscription, status: 'cancelled', endedAt: at, cancelAtPeriodEnd: false, pendingChange: null, pendingItems: [], updatedAt: now };
    return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }], finalInvoice: finalInvoiceOf(subscription, at, usage) };
  }
  if (subscription.billingCycles !== null && subscription.periodsBilled >= subscription.billingCycles) {
    const completed: Subscription = { ...subscription, status: 'completed', endedAt: at, pendingChange: null, pendingItems: [], updatedAt: now };
    return { subscription: completed, events: [{ kind: 'completed', subscription: completed }], finalInvoice: finalInvoiceOf(subscription, at, usage) };
  }
  const nextPeriod = (s: Subscription): Subscription => {
    const cycleIndex = s.cycleIndex + 1;
    const { start, end } = periodOf(s.cycleAnchor, s.billingInterval, cycleIndex);
    return { ...s, cycleIndex, currentPeriodStart: start, currentPeriodEnd: end, periodsBilled: s.periodsBilled + 1 };
  };
  const { subscription: renewed, invoice, update } = beginPeriod(subscription, nextPeriod, 'subscription_cycle', now, usage);
  return { subscription: renewed, events: [...(update ? [update(renewed)] : []), { kind: 'activated', subscription: renewed }], invoice };
}

/**
 * A new period of the subscription's (new) interval begins now and is billed: an interval change.
 * `usage` is the cut period's (cutUsageToBill), each line priced on the interval it ran on.
 */
export function beginPeriodNow(subscription: Subscription, now: Date, usage: PeriodUsage = []): { subscription: Subscription; invoice: PeriodInvoice } {
  const { subscription: started, invoice } = beginPeriod(subscription, (s) => startPeriodsAt(s, now), 'subscription_update', now, usage);
  return { subscription: started, invoice };
}

/** The moves the billing clock makes, by step kind (the clock runs them; the preview simulates them). */
export const LIFECYCLE_MOVES: Record<LifecycleStep['kind'], (subscription: Subscription, at: Date, now: Date, usage?: PeriodUsage) => SubscriptionChange> = {
  end_trial: endTrial,
  renew,
  resume,
};

/**
 * The invoice the subscription's next period will raise: the billing clock's own next move,
 * run on a copy at its time — so the preview is, line for line, what the renewal bills, with
 * `usage` the usage so far of the period that will have ended (measured as the renewal will).
 * None when the next move raises no invoice (it ends, completes, or is paused without resume_at).
 */
export function upcomingInvoice(subscription: Subscription, usage: PeriodUsage = []): PeriodInvoice {
  const step = nextLifecycleStep(subscription);
  const invoice = step ? LIFECYCLE_MOVES[step.kind](subscription, step.runAt, step.runAt, usage).invoice : undefined;
  if (!invoice) {
    // Stripe answers 404 (invoice_upcoming_none): a preview is a read, not a move a state refuses.
    throw new DomainError('not_found', 'subscription_no_upcoming_invoice', `Subscription '${subscription.id}' (${subscription.status}${subscription.cancelAtPeriodEnd ? ', ending at its period end' : ''}) has no upcoming invoice.`);
  }
  return invoice;
}

/** What the billing clock must do next for this subscription, and when (its own time). */
export function nextLifecycleStep(subscription: Subscription): LifecycleStep | null {
  switch (subscription.status) {
    case 'trialing':
      return { kind: 'end_trial', runAt: subscription.trialEnd! };
    case 'active':
    case 'past_due':
      return { kind: 'renew', runAt: subscription.currentPeriodEnd };
    case 'paused':
      return subscription.resumeAt ? { kind: 'resume', runAt: subscription.resumeAt } : null;
    default:
      return null;
  }
}

/**
 * The final dunning reminder of `invoiceId` went out unpaid: an active subscription falls past
 * due (`subscription.past_due`). Any other status is left as it is (a cancelled, paused or
 * already past_due subscription does not move); it keeps renewing while past due.
 */
export function fallPastDue(subscription: Subscription, invoiceId: string, now: Date): SubscriptionChange {
  if (subscription.status !== 'active') return { subscription, events: [] };
  const pastDue: Subscription = { ...subscription, status: 'past_due', updatedAt: now };
  return { subscription: pastDue, events: [{ kind: 'past_due', subscription: pastDue, invoiceId }] };
}
