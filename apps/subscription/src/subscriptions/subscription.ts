import { checkMetadata, DomainError, failedPrecondition, invalidArgument, type Metadata, newId, type TenantRef } from '@recur/kernel';
import { BILLING_INTERVALS, type BillingInterval, pricePeriod, type PeriodPrice, type PricedPlan } from '@recur/pricing';
import { DAY_MS, periodOf } from './billing-period';

/**
 * The subscription aggregate and its state machine (README, Subscriptions):
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
  reactivatedFrom: string | null;
  testClockId: string | null;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields a subscription.updated may name as changed. */
export type SubscriptionChangedField = 'cancel_at_period_end';

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

export type BillingReason = 'subscription_create' | 'subscription_cycle' | 'subscription_update';

/** One billed period: what the invoicing service is asked to raise, priced by @recur/pricing. */
export interface PeriodInvoice {
  periodStart: Date;
  periodEnd: Date;
  billingReason: BillingReason;
  price: PeriodPrice;
}

/** A subscription after a change: its events, and the invoice of a period that began. */
export interface SubscriptionChange {
  subscription: Subscription;
  events: SubscriptionEvent[];
  invoice?: PeriodInvoice;
}

/** The time-driven step the billing clock holds for a subscription, if any. */
export interface LifecycleStep {
  kind: 'end_trial' | 'renew' | 'resume';
  runAt: Date;
}

export const QUANTITY_MAX = 1_000_000;
export const TRIAL_DAYS_MAX = 730;
export const BILLING_CYCLES_MAX = 1_000;

/** A state-machine refusal: 409 with a code that names the state. */
const wrongState = (code: string, message: string) => failedPrecondition(code, message);

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
  metadata?: Metadata;
  testClockId: string | null;
}

function checkInterval(interval: string, offered: readonly string[]): BillingInterval {
  if (!(BILLING_INTERVALS as string[]).includes(interval)) {
    throw invalidArgument('billing_interval', `billing_interval must be one of ${BILLING_INTERVALS.join(', ')}`);
  }
  if (!offered.includes(interval)) throw invalidArgument('billing_interval', `The plan is not sold ${interval}; it offers ${offered.join(', ')}.`);
  return interval as BillingInterval;
}

function checkQuantity(quantity: number): number {
  if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > QUANTITY_MAX) throw invalidArgument('quantity', `quantity must be an integer from 1 to ${QUANTITY_MAX}`);
  return quantity;
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

/** The invoice of the period the subscription is now in, priced from its snapshot. */
export function invoiceOfCurrentPeriod(subscription: Subscription, billingReason: BillingReason): PeriodInvoice {
  return {
    periodStart: subscription.currentPeriodStart,
    periodEnd: subscription.currentPeriodEnd,
    billingReason,
    price: pricePeriod({ plan: subscription.price, quantity: subscription.quantity, interval: subscription.billingInterval }),
  };
}

/** A new period starts at `at`: the anchor moves there and the period is billed. */
function startPeriodsAt(subscription: Subscription, at: Date): Subscription {
  const { start, end } = periodOf(at, subscription.billingInterval, 0);
  return { ...subscription, cycleAnchor: at, cycleIndex: 0, currentPeriodStart: start, currentPeriodEnd: end, periodsBilled: subscription.periodsBilled + 1 };
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
    reactivatedFrom: null,
    testClockId: fields.testClockId,
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
  };
  // Price once now, so a plan the engine cannot price is refused at sale, not at renewal.
  pricePeriod({ plan: base.price, quantity, interval: billingInterval });
  if (trialEnd) return { subscription: base, events: [{ kind: 'created', subscription: base }] };
  const subscription = startPeriodsAt(base, now);
  return { subscription, events: [{ kind: 'created', subscription }], invoice: invoiceOfCurrentPeriod(subscription, 'subscription_create') };
}

const isEnded = (subscription: Subscription) => subscription.status === 'cancelled' || subscription.status === 'completed';

function assertNotEnded(subscription: Subscription): void {
  if (subscription.status === 'cancelled') throw wrongState('subscription_cancelled', `Subscription '${subscription.id}' is cancelled.`);
  if (subscription.status === 'completed') throw wrongState('subscription_completed', `Subscription '${subscription.id}' is completed.`);
}

/** Ends it now (any running state). */
export function cancelNow(subscription: Subscription, now: Date): SubscriptionChange {
  assertNotEnded(subscription);
  const cancelled: Subscription = { ...subscription, status: 'cancelled', cancelledAt: now, endedAt: now, resumeAt: null, updatedAt: now };
  return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }] };
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
  if (resumeAt && resumeAt.getTime() <= now.getTime()) throw invalidArgument('resume_at', 'resume_at must be in the future.');
  const paused: Subscription = { ...subscription, status: 'paused', pausedAt: now, resumeAt, cancelAtPeriodEnd: false, cancelledAt: null, updatedAt: now };
  return { subscription: paused, events: [{ kind: 'paused', subscription: paused }] };
}

/** Resumes a paused subscription at `at` (now, or its resume_at): a new period begins and is billed. */
export function resume(subscription: Subscription, at: Date, now: Date): SubscriptionChange {
  if (subscription.status !== 'paused') throw wrongState('subscription_not_paused', `Only a paused subscription can be resumed; '${subscription.id}' is ${subscription.status}.`);
  const resumed: Subscription = { ...startPeriodsAt(subscription, at), status: 'active', pausedAt: null, resumeAt: null, updatedAt: now };
  return { subscription: resumed, events: [{ kind: 'resumed', subscription: resumed }], invoice: invoiceOfCurrentPeriod(resumed, 'subscription_cycle') };
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
  };
  const subscription = startPeriodsAt(base, now);
  return { subscription, events: [{ kind: 'reactivated', subscription }], invoice: invoiceOfCurrentPeriod(subscription, 'subscription_create') };
}

export function extendTrial(subscription: Subscription, trialEnd: Date, now: Date): SubscriptionChange {
  if (subscription.status !== 'trialing' || !subscription.trialEnd) {
    throw wrongState('subscription_not_trialing', `Only a trialing subscription's trial can be extended; '${subscription.id}' is ${subscription.status}.`);
  }
  if (trialEnd.getTime() <= subscription.trialEnd.getTime()) throw invalidArgument('trial_end', 'trial_end must be later than the current trial end.');
  if (trialEnd.getTime() > now.getTime() + TRIAL_DAYS_MAX * DAY_MS) throw invalidArgument('trial_end', `trial_end must be within ${TRIAL_DAYS_MAX} days.`);
  const extended: Subscription = { ...subscription, trialEnd, currentPeriodEnd: trialEnd, updatedAt: now };
  return { subscription: extended, events: [{ kind: 'trial_extended', subscription: extended, previousTrialEnd: subscription.trialEnd }] };
}

/** The trial ends at `at` (its trial_end): the first paid period begins, or it ends if set to. */
export function endTrial(subscription: Subscription, at: Date, now: Date): SubscriptionChange {
  if (subscription.status !== 'trialing') throw new DomainError('internal', 'step_stale', `Subscription '${subscription.id}' is not trialing.`);
  if (subscription.cancelAtPeriodEnd) {
    const cancelled: Subscription = { ...subscription, status: 'cancelled', endedAt: at, cancelAtPeriodEnd: false, updatedAt: now };
    return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }] };
  }
  const active: Subscription = { ...startPeriodsAt(subscription, at), status: 'active', updatedAt: now };
  return { subscription: active, events: [{ kind: 'activated', subscription: active }], invoice: invoiceOfCurrentPeriod(active, 'subscription_cycle') };
}

/**
 * The current period ended at `at`: the subscription ends if it was set to, completes if it
 * billed its last cycle, and otherwise renews into the next period, which is billed.
 */
export function renew(subscription: Subscription, at: Date, now: Date): SubscriptionChange {
  if (subscription.status !== 'active' && subscription.status !== 'past_due') {
    throw new DomainError('internal', 'step_stale', `Subscription '${subscription.id}' is ${subscription.status}.`);
  }
  if (subscription.cancelAtPeriodEnd) {
    const cancelled: Subscription = { ...subscription, status: 'cancelled', endedAt: at, cancelAtPeriodEnd: false, updatedAt: now };
    return { subscription: cancelled, events: [{ kind: 'cancelled', subscription: cancelled }] };
  }
  if (subscription.billingCycles !== null && subscription.periodsBilled >= subscription.billingCycles) {
    const completed: Subscription = { ...subscription, status: 'completed', endedAt: at, updatedAt: now };
    return { subscription: completed, events: [{ kind: 'completed', subscription: completed }] };
  }
  const cycleIndex = subscription.cycleIndex + 1;
  const { start, end } = periodOf(subscription.cycleAnchor, subscription.billingInterval, cycleIndex);
  const renewed: Subscription = { ...subscription, cycleIndex, currentPeriodStart: start, currentPeriodEnd: end, periodsBilled: subscription.periodsBilled + 1, updatedAt: now };
  return { subscription: renewed, events: [{ kind: 'activated', subscription: renewed }], invoice: invoiceOfCurrentPeriod(renewed, 'subscription_cycle') };
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
