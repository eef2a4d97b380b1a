import { invalidArgument, notFound } from '@recur/kernel';
import { type BillingInterval, prorate, type PricedPlan } from '@recur/pricing';
import { type Discount, type RedeemedCoupon, startDiscount } from './discount';
import {
  ADD_ONS_MAX,
  attachAddOn,
  type CatalogAddOn,
  checkInterval,
  checkQuantity,
  type PendingItem,
  type PeriodUsage,
  priceNextInvoice,
  recurringLines,
  type Subscription,
  type SubscriptionChange,
  type SubscriptionChangedField,
  wrongState,
  beginPeriodNow,
} from './subscription';

/**
 * Changes to a running subscription's terms: plan, quantity, billing interval, add-ons and
 * discount (docs/api/subscriptions.md#changes-mid-period).
 *
 * Proration rule: a change during a billed period (active or past_due) adds two pending
 * items for the rest of the period, each `amount × seconds left / seconds in the period`
 * rounded half up (@recur/pricing's prorate): a credit for the unused part of the old price
 * and a charge at the new one. They are billed with the next period invoice (Stripe's
 * `proration_behavior: create_prorations`), where the upcoming-invoice preview shows them; no
 * invoice is raised at the change. A trialing or paused subscription has no billed period, so
 * its changes prorate nothing.
 */

const day = (at: Date): string => at.toISOString().slice(0, 10);

function assertRunning(subscription: Subscription): void {
  if (subscription.status === 'cancelled') throw wrongState('subscription_cancelled', `Subscription '${subscription.id}' is cancelled.`);
  if (subscription.status === 'completed') throw wrongState('subscription_completed', `Subscription '${subscription.id}' is completed.`);
}

function assertNoPendingChange(subscription: Subscription): void {
  if (subscription.pendingChange) {
    throw wrongState('subscription_pending_change', `Subscription '${subscription.id}' has a change pending at its period's end; cancel it first (DELETE …/pending-change).`);
  }
}

/** True while a paid period runs, the only time a change is prorated. */
const inBilledPeriod = (subscription: Subscription): boolean => subscription.status === 'active' || subscription.status === 'past_due';

const span = (subscription: Subscription) => ({ start: Math.floor(subscription.currentPeriodStart.getTime() / 1000), end: Math.floor(subscription.currentPeriodEnd.getTime() / 1000) });

/** The credit for `before` and the charge for `after` over the rest of the period from `now`; zero items left out. */
function prorations(subscription: Subscription, before: ProratedTerms | null, after: ProratedTerms | null, now: Date): PendingItem[] {
  if (!inBilledPeriod(subscription)) return [];
  const at = Math.floor(now.getTime() / 1000);
  const items: PendingItem[] = [];
  if (before) items.push({ description: `Unused time on ${before.label} after ${day(now)}`, amount: -prorate(before.amount, span(subscription), at), ...taxRatesOf(before) });
  if (after) items.push({ description: `Remaining time on ${after.label} after ${day(now)}`, amount: prorate(after.amount, span(subscription), at), ...taxRatesOf(after) });
  return items.filter((item) => item.amount !== 0);
}

/** What a proration prices: its period amount, its label, and the tax rates of the plan or add-on it prorates (taxed as that line is). */
interface ProratedTerms {
  amount: number;
  label: string;
  taxRateIds?: readonly string[];
}

const taxRatesOf = (terms: ProratedTerms): Pick<PendingItem, 'taxRateIds'> => (terms.taxRateIds && terms.taxRateIds.length > 0 ? { taxRateIds: [...terms.taxRateIds] } : {});

const sumOf = (lines: { amount: number }[]): number => lines.reduce((total, line) => total + line.amount, 0);
/** The plan's own lines of a period (base, tiers, components), add-ons excluded. */
const planAmount = (terms: Pick<Subscription, 'price' | 'quantity' | 'billingInterval'>): number => sumOf(recurringLines({ ...terms, addOns: [] }));

function updated(before: Subscription, after: Subscription, changedFields: SubscriptionChangedField[]): SubscriptionChange {
  // Price once, so terms the engine cannot price are refused now, not at renewal.
  priceNextInvoice(after);
  return { subscription: after, events: [{ kind: 'updated', subscription: after, previous: before, changedFields }] };
}

export interface PlanChange {
  plan?: { id: string; price: PricedPlan; billingIntervals: readonly string[] };
  quantity?: number;
}

function checkPlanChange(subscription: Subscription, change: PlanChange): { planId: string; price: PricedPlan; quantity: number } {
  const planId = change.plan?.id ?? subscription.planId;
  const price = change.plan?.price ?? subscription.price;
  const quantity = checkQuantity(change.quantity ?? subscription.quantity);
  if (change.plan) {
    if (price.currency !== subscription.price.currency) throw invalidArgument('plan', `Plan '${planId}' bills in ${price.currency}; the subscription bills in ${subscription.price.currency}.`);
    if (!change.plan.billingIntervals.includes(subscription.billingInterval)) {
      throw invalidArgument('plan', `Plan '${planId}' is not sold ${subscription.billingInterval}; change the billing interval first.`);
    }
  }
  if (planId === subscription.planId && quantity === subscription.quantity) throw invalidArgument('plan', 'Nothing to change: give another plan or another quantity.');
  return { planId, price, quantity };
}

const termsLabel = (price: PricedPlan, quantity: number) => `${price.name} × ${quantity}`;

/** Changes plan and/or quantity now, prorating the rest of the period. */
export function changePlanNow(subscription: Subscription, change: PlanChange, now: Date): SubscriptionChange {
  assertRunning(subscription);
  assertNoPendingChange(subscription);
  const { planId, price, quantity } = checkPlanChange(subscription, change);
  const next: Subscription = { ...subscription, planId, price, quantity, updatedAt: now };
  const items = prorations(
    subscription,
    { amount: planAmount(subscription), label: termsLabel(subscription.price, subscription.quantity), taxRateIds: subscription.price.taxRateIds },
    { amount: planAmount(next), label: termsLabel(price, quantity), taxRateIds: price.taxRateIds },
    now,
  );
  const after: Subscription = { ...next, pendingItems: [...subscription.pendingItems, ...items] };
  const fields: SubscriptionChangedField[] = [...(planId !== subscription.planId ? (['plan', 'price'] as const) : []), ...(quantity !== subscription.quantity ? (['quantity'] as const) : [])];
  return updated(subscription, after, fields);
}

/** Defers a plan and/or quantity change to the end of the current period (or trial). */
export function schedulePlanChange(subscription: Subscription, change: PlanChange, now: Date): SubscriptionChange {
  assertRunning(subscription);
  assertNoPendingChange(subscription);
  if (subscription.status === 'paused') throw wrongState('subscription_paused', `Subscription '${subscription.id}' is paused: it has no period end to change at.`);
  if (subscription.cancelAtPeriodEnd) throw wrongState('subscription_cancel_scheduled', `Subscription '${subscription.id}' ends at its period's end.`);
  const { planId, price, quantity } = checkPlanChange(subscription, change);
  priceNextInvoice({ ...subscription, price, quantity });
  const after: Subscription = { ...subscription, pendingChange: { planId, price, quantity, effectiveAt: subscription.currentPeriodEnd, requestedAt: now }, updatedAt: now };
  return { subscription: after, events: [{ kind: 'updated', subscription: after, previous: subscription, changedFields: ['pending_change'] }] };
}

export function cancelPendingChange(subscription: Subscription, now: Date): SubscriptionChange {
  if (!subscription.pendingChange) throw wrongState('subscription_no_pending_change', `Subscription '${subscription.id}' has no pending change.`);
  const after: Subscription = { ...subscription, pendingChange: null, updatedAt: now };
  return { subscription: after, events: [{ kind: 'updated', subscription: after, previous: subscription, changedFields: ['pending_change'] }] };
}

/**
 * Moves to another interval the plan offers. A billed period ends now: its unused part is
 * credited (plan and add-ons, prorated to the second) and a new period of the new interval
 * begins now and is invoiced at once (`subscription_update`) with that credit, any pending
 * prorations and `usage`, the metered usage of the period cut short (cutUsageToBill, measured
 * by the caller). Trialing or paused: only the interval changes; nothing is billed.
 */
export function changeBillingInterval(subscription: Subscription, interval: string, offered: readonly string[], now: Date, usage: PeriodUsage = []): SubscriptionChange {
  assertRunning(subscription);
  assertNoPendingChange(subscription);
  const billingInterval: BillingInterval = checkInterval(interval, offered);
  if (billingInterval === subscription.billingInterval) throw invalidArgument('billing_interval', `The subscription is already billed ${billingInterval}.`);
  if (!inBilledPeriod(subscription)) return updated(subscription, { ...subscription, billingInterval, updatedAt: now }, ['billing_interval']);
  if (subscription.currentPeriodStart.getTime() >= now.getTime()) {
    // The new period would start the same second as the current one and share its invoice key.
    throw wrongState('subscription_period_started_now', `Subscription '${subscription.id}' began its period this second; change the interval later.`);
  }
  const credit = prorations(subscription, { amount: sumOf(recurringLines(subscription)), label: `${subscription.price.name} (${subscription.billingInterval})` }, null, now);
  const credited: Subscription = { ...subscription, billingInterval, pendingItems: [...subscription.pendingItems, ...credit] };
  const { subscription: after, invoice } = beginPeriodNow(credited, now, usage);
  return { ...updated(subscription, after, ['billing_interval']), invoice };
}

function findAddOn(subscription: Subscription, addonId: string) {
  const index = subscription.addOns.findIndex((addOn) => addOn.addonId === addonId);
  if (index < 0) throw notFound('subscription add-on', addonId);
  return { index, addOn: subscription.addOns[index] };
}

const addOnAmount = (subscription: Subscription, addonId: string): number => sumOf(recurringLines(subscription).filter((line) => line.addonId === addonId));

export function addAddOn(subscription: Subscription, catalogAddOn: CatalogAddOn, quantity: number, now: Date): SubscriptionChange {
  assertRunning(subscription);
  if (subscription.addOns.some((addOn) => addOn.addonId === catalogAddOn.id)) {
    throw wrongState('subscription_addon_exists', `Subscription '${subscription.id}' already carries add-on '${catalogAddOn.id}'; change its quantity instead.`);
  }
  if (subscription.addOns.length >= ADD_ONS_MAX) throw invalidArgument('addon', `A subscription carries at most ${ADD_ONS_MAX} add-ons.`);
  const addOn = attachAddOn(catalogAddOn, quantity, subscription.price.currency, now);
  const next: Subscription = { ...subscription, addOns: [...subscription.addOns, addOn], updatedAt: now };
  const items = prorations(subscription, null, { amount: addOnAmount(next, addOn.addonId), label: `${addOn.name} × ${addOn.quantity}`, taxRateIds: addOn.taxRateIds }, now);
  return updated(subscription, { ...next, pendingItems: [...subscription.pendingItems, ...items] }, ['add_ons']);
}

export function updateAddOn(subscription: Subscription, addonId: string, quantity: number, now: Date): SubscriptionChange {
  assertRunning(subscription);
  const { index, addOn } = findAddOn(subscription, addonId);
  const changed = { ...addOn, quantity: checkQuantity(quantity) };
  const next: Subscription = { ...subscription, addOns: subscription.addOns.map((item, at) => (at === index ? changed : item)), updatedAt: now };
  const items = addOn.quantity === changed.quantity ? [] : prorations(
    subscription,
    { amount: addOnAmount(subscription, addonId), label: `${addOn.name} × ${addOn.quantity}`, taxRateIds: addOn.taxRateIds },
    { amount: addOnAmount(next, addonId), label: `${changed.name} × ${changed.quantity}`, taxRateIds: changed.taxRateIds },
    now,
  );
  return updated(subscription, { ...next, pendingItems: [...subscription.pendingItems, ...items] }, ['add_ons']);
}

export function removeAddOn(subscription: Subscription, addonId: string, now: Date): SubscriptionChange {
  assertRunning(subscription);
  const { addOn } = findAddOn(subscription, addonId);
  const next: Subscription = { ...subscription, addOns: subscription.addOns.filter((item) => item.addonId !== addonId), updatedAt: now };
  const items = prorations(subscription, { amount: addOnAmount(subscription, addonId), label: `${addOn.name} × ${addOn.quantity}`, taxRateIds: addOn.taxRateIds }, null, now);
  return updated(subscription, { ...next, pendingItems: [...subscription.pendingItems, ...items] }, ['add_ons']);
}

/** Discounts the following period invoices by a redeemed coupon, replacing any earlier discount. */
export function applyDiscount(subscription: Subscription, redeemed: RedeemedCoupon, now: Date): SubscriptionChange {
  assertRunning(subscription);
  const discount: Discount = startDiscount(redeemed, now);
  return updated(subscription, { ...subscription, discount, updatedAt: now }, ['discount']);
}

export function removeDiscount(subscription: Subscription, now: Date): SubscriptionChange {
  if (!subscription.discount) throw wrongState('subscription_no_discount', `Subscription '${subscription.id}' has no discount.`);
  return updated(subscription, { ...subscription, discount: null, updatedAt: now }, ['discount']);
}

/** Refused before a code is redeemed, so a refusal never counts a redemption. */
export const assertCanTakeDiscount = assertRunning;
