import { DomainError } from '@recur/kernel';
import { decodePublicEvent, encodeEvent, isInternalEvent, type PublicEvent } from '@recur/messaging';
import { thrownBy } from '@recur/testing';
import type { PricedPlan } from '@recur/pricing';
import { afterBilledPeriod, couponOfNextInvoice, type RedeemedCoupon, startDiscount } from '../src/subscriptions/discount';
import { translateSubscriptionEvent } from '../src/subscriptions/subscription-events.translator';
import {
  cancelAtPeriodEnd,
  createSubscription,
  extendTrial,
  keep,
  pause,
  renew,
  type Subscription,
  type SubscriptionChange,
  upcomingInvoice,
} from '../src/subscriptions/subscription';
import {
  addAddOn,
  applyDiscount,
  cancelPendingChange,
  changeBillingInterval,
  changePlanNow,
  removeAddOn,
  removeDiscount,
  schedulePlanChange,
  updateAddOn,
} from '../src/subscriptions/subscription-changes';

const tenant = { accountId: 'acct_1', livemode: false };
const price = (amountMonthly: number, name = 'Basic'): PricedPlan => ({ name, pricingModel: 'per_unit', amountMonthly, currency: 'usd', packageSize: 1, tiers: [], components: [] });
const BASIC = { id: 'plan_basic', price: price(1_000), billingIntervals: ['monthly', 'yearly'] };
const PRO = { id: 'plan_pro', price: price(3_000, 'Pro'), billingIntervals: ['monthly', 'yearly'] };
// 2026-04-01 → 2026-05-01: a 30-day period.
const T0 = new Date('2026-04-01T00:00:00Z');
const at = (days: number) => new Date(T0.getTime() + days * 86_400_000);
const SUPPORT = { id: 'addon_support', name: 'Support', priceMonthly: 600, currency: 'usd', onSale: true, taxRateIds: [] };

const failure = (fn: () => unknown) => thrownBy<DomainError>(fn);
/** The public webhook events a change publishes, decoded as webhook-dispatch reads them. */
const publicEvents = (change: SubscriptionChange) =>
  change.events.flatMap(translateSubscriptionEvent).filter((event): event is PublicEvent => !isInternalEvent(event))
    .map((event) => decodePublicEvent(JSON.stringify(encodeEvent(event)))).map((event) => ({ type: event.type, data: event.data }));
const amounts = (change: { subscription: Subscription }) => change.subscription.pendingItems.map((item) => item.amount);

function active(quantity = 2): Subscription {
  return createSubscription(tenant, { customerId: 'cus_1', planId: BASIC.id, price: BASIC.price, planIntervals: BASIC.billingIntervals, billingInterval: 'monthly', quantity, testClockId: null }, T0).subscription;
}

const coupon = (fields: Partial<RedeemedCoupon> = {}): RedeemedCoupon => ({
  coupon: { id: 'coupon_1', name: '25 % off', type: 'percentage', value: 25, currency: null },
  duration: 'repeating', durationInPeriods: 2, promotionCodeId: 'promo_1', promotionCode: 'SPRING', ...fields,
});

/** Renews period after period, answering each period invoice's total. */
function renewals(subscription: Subscription, count: number): { totals: number[]; last: Subscription } {
  const totals: number[] = [];
  let current = subscription;
  for (let index = 0; index < count; index += 1) {
    const change: SubscriptionChange = renew(current, current.currentPeriodEnd, current.currentPeriodEnd);
    totals.push(change.invoice!.price.total);
    current = change.subscription;
  }
  return { totals, last: current };
}

describe('plan and quantity changes', () => {
  it('now: credits the unused part of the old price and charges the rest at the new one, to the second, on the next invoice', () => {
    // 10 of 30 days used: 2/3 of 2 × 1000 credited, 2/3 of 2 × 3000 charged.
    const change = changePlanNow(active(), { plan: PRO }, at(10));
    expect(change.subscription).toMatchObject({ planId: 'plan_pro', quantity: 2, price: PRO.price });
    expect(amounts(change)).toEqual([-1_333, 4_000]);
    expect(change.invoice).toBeUndefined();
    const preview = upcomingInvoice(change.subscription);
    expect(preview.price.lines.map((line) => line.amount)).toEqual([6_000, -1_333, 4_000]);
    expect(preview.price.total).toBe(8_667);
    // The renewal bills exactly the preview, then the prorations are gone.
    const renewed = renew(change.subscription, change.subscription.currentPeriodEnd, change.subscription.currentPeriodEnd);
    expect(renewed.invoice).toEqual(preview);
    expect(renewed.subscription.pendingItems).toEqual([]);
    expect(upcomingInvoice(renewed.subscription).price.total).toBe(6_000);
  });

  it('a quantity change publishes subscription.updated with the previous quantity; no proration while trialing', () => {
    const change = changePlanNow(active(2), { quantity: 5 }, at(15));
    expect(amounts(change)).toEqual([-1_000, 2_500]);
    const published = publicEvents(change);
    expect(published.map((event) => event.type)).toEqual(['subscription.updated']);
    expect(published[0].data).toMatchObject({ object: { quantity: 5 }, previous_attributes: { quantity: 2 } });
    const trialing = createSubscription(tenant, { customerId: 'cus_1', planId: BASIC.id, price: BASIC.price, planIntervals: BASIC.billingIntervals, billingInterval: 'monthly', trialDays: 14, testClockId: null }, T0).subscription;
    expect(changePlanNow(trialing, { quantity: 3 }, at(2)).subscription.pendingItems).toEqual([]);
    // A change deferred to the trial's end moves with an extended trial, and applies when it ends.
    const deferred = schedulePlanChange(trialing, { quantity: 4 }, at(2)).subscription;
    expect(deferred.pendingChange!.effectiveAt).toEqual(at(14));
    const extended = extendTrial(deferred, at(20), at(3)).subscription;
    expect(extended.pendingChange!.effectiveAt).toEqual(at(20));
    expect(upcomingInvoice(extended)).toMatchObject({ periodStart: at(20), price: { total: 4_000 } });
  });

  it('refuses nothing-to-change, a quantity below 1 and another currency (400), an ended subscription (409)', () => {
    expect(failure(() => changePlanNow(active(2), { quantity: 2 }, at(1)))).toMatchObject({ kind: 'invalid_argument', param: 'plan' });
    expect(failure(() => changePlanNow(active(2), { quantity: 0 }, at(1)))).toMatchObject({ kind: 'invalid_argument', param: 'quantity' });
    expect(failure(() => changePlanNow(active(), { plan: { ...PRO, price: { ...PRO.price, currency: 'eur' } } }, at(1)))).toMatchObject({ kind: 'invalid_argument', param: 'plan' });
    expect(failure(() => changePlanNow(active(), { plan: { ...PRO, billingIntervals: ['yearly'] } }, at(1)))).toMatchObject({ kind: 'invalid_argument', param: 'plan' });
    const cancelled: Subscription = { ...active(), status: 'cancelled' };
    expect(failure(() => changePlanNow(cancelled, { quantity: 3 }, at(1)))).toMatchObject({ kind: 'failed_precondition', code: 'subscription_cancelled' });
  });

  it('at period end: a pending change beside the current plan, applied by the renewal and previewed by the upcoming invoice', () => {
    const scheduled = schedulePlanChange(active(2), { plan: PRO, quantity: 3 }, at(5)).subscription;
    expect(scheduled).toMatchObject({ planId: 'plan_basic', quantity: 2, pendingChange: { planId: 'plan_pro', quantity: 3, effectiveAt: at(30) } });
    expect(scheduled.pendingItems).toEqual([]);
    const preview = upcomingInvoice(scheduled);
    expect(preview.price.total).toBe(9_000);
    const renewed = renew(scheduled, scheduled.currentPeriodEnd, scheduled.currentPeriodEnd);
    expect(renewed.invoice).toEqual(preview);
    expect(renewed.subscription).toMatchObject({ planId: 'plan_pro', quantity: 3, pendingChange: null });
    expect(renewed.events.map((event) => event.kind)).toEqual(['updated', 'activated']);
    expect(renewed.events[0]).toMatchObject({ changedFields: ['plan', 'price', 'quantity'] });
    // A second change while one is pending, and a pause, are refused; deleting it works once.
    expect(failure(() => changePlanNow(scheduled, { quantity: 4 }, at(6)))).toMatchObject({ code: 'subscription_pending_change' });
    expect(failure(() => pause(scheduled, null, at(6)))).toMatchObject({ code: 'subscription_pending_change' });
    // Set to end: a pause would drop the end unannounced; refused until it is kept.
    const setToEnd = cancelAtPeriodEnd(active(1), at(6)).subscription;
    expect(failure(() => pause(setToEnd, null, at(7)))).toMatchObject({ code: 'subscription_cancel_scheduled' });
    expect(pause(keep(setToEnd, at(8)).subscription, null, at(9)).subscription).toMatchObject({ status: 'paused', cancelAtPeriodEnd: false });
    // A subscription that ends at that period end drops the change with it.
    const ending = cancelAtPeriodEnd(scheduled, at(6)).subscription;
    expect(renew(ending, ending.currentPeriodEnd, ending.currentPeriodEnd).subscription).toMatchObject({ status: 'cancelled', planId: 'plan_basic', pendingChange: null });
    const cleared = cancelPendingChange(scheduled, at(6)).subscription;
    expect(cleared.pendingChange).toBeNull();
    expect(failure(() => cancelPendingChange(cleared, at(7)))).toMatchObject({ kind: 'failed_precondition', code: 'subscription_no_pending_change' });
    // Scheduling is told to services only (the specification's subscription.updated means the plan changed).
    const scheduling = schedulePlanChange(active(2), { quantity: 3 }, at(5));
    expect([scheduling.events.flatMap(translateSubscriptionEvent).length, publicEvents(scheduling).length]).toEqual([1, 0]);
    expect(publicEvents(renewed).map((event) => event.type)).toEqual(['subscription.updated', 'subscription.activated']);
  });
});

describe('billing interval', () => {
  it('starts a new period now, invoiced at once with the unused part of the old one credited', () => {
    const change = changeBillingInterval(active(1), 'yearly', BASIC.billingIntervals, at(10));
    expect(change.subscription).toMatchObject({ billingInterval: 'yearly', currentPeriodStart: at(10), cycleAnchor: at(10) });
    expect(change.invoice!.billingReason).toBe('subscription_update');
    expect(change.invoice!.price.lines.map((line) => line.amount)).toEqual([12_000, -667]);
    expect(change.subscription.pendingItems).toEqual([]);
    expect(failure(() => changeBillingInterval(active(1), 'quarterly', BASIC.billingIntervals, at(10)))).toMatchObject({ param: 'billing_interval' });
    expect(failure(() => changeBillingInterval(active(1), 'weekly', BASIC.billingIntervals, at(10)))).toMatchObject({ param: 'billing_interval' });
    expect(failure(() => changeBillingInterval(active(1), 'yearly', BASIC.billingIntervals, T0))).toMatchObject({ code: 'subscription_period_started_now' });
  });
});

describe('add-ons', () => {
  it('add, update and remove prorate the add-on alone; off sale or twice is refused', () => {
    const added = addAddOn(active(1), SUPPORT, 2, at(15));
    expect(amounts(added)).toEqual([600]);
    const updated = updateAddOn(added.subscription, SUPPORT.id, 3, at(20));
    expect(amounts(updated)).toEqual([600, -400, 600]);
    const removed = removeAddOn(updated.subscription, SUPPORT.id, at(25));
    expect(amounts(removed)).toEqual([600, -400, 600, -300]);
    expect(removed.subscription.addOns).toEqual([]);
    expect(upcomingInvoice(updated.subscription).price.lines.filter((line) => line.kind === 'addon').map((line) => line.amount)).toEqual([1_800]);
    expect(failure(() => addAddOn(active(1), { ...SUPPORT, onSale: false }, 1, at(1)))).toMatchObject({ kind: 'invalid_argument', code: 'addon_off_sale', param: 'addon' });
    expect(failure(() => addAddOn(added.subscription, SUPPORT, 1, at(16)))).toMatchObject({ kind: 'failed_precondition', code: 'subscription_addon_exists' });
    expect(failure(() => updateAddOn(active(1), SUPPORT.id, 2, at(1)))).toMatchObject({ kind: 'not_found' });
    // Add-on changes are told to services only.
    expect([added.events.flatMap(translateSubscriptionEvent).length, publicEvents(added).length]).toEqual([1, 0]);
  });
});

describe('tax rates named by the plan and the add-ons', () => {
  const TAXED_BASIC = { ...BASIC, price: { ...BASIC.price, taxRateIds: ['txr_plan16'] } };
  const TAXED_PRO = { ...PRO, price: { ...PRO.price, taxRateIds: ['txr_pro18'] } };
  const TAXED_SUPPORT = { ...SUPPORT, taxRateIds: ['txr_support7'] };
  const taxedActive = () =>
    createSubscription(tenant, { customerId: 'cus_1', planId: TAXED_BASIC.id, price: TAXED_BASIC.price, planIntervals: TAXED_BASIC.billingIntervals, billingInterval: 'monthly', quantity: 1, testClockId: null }, T0).subscription;
  const ratesByLine = (lines: { description: string; taxRateIds?: string[] }[]) => lines.map((line) => [line.description, line.taxRateIds ?? []]);

  it("every line carries the rates of what it prices: the plan's, the add-on's, and each proration those of what it prorates", () => {
    const withSupport = addAddOn(taxedActive(), TAXED_SUPPORT, 1, at(15)).subscription;
    const upgraded = changePlanNow(withSupport, { plan: TAXED_PRO }, at(20)).subscription;
    expect(ratesByLine(upcomingInvoice(upgraded).price.lines)).toEqual([
      ['Pro', ['txr_pro18']],
      ['Support', ['txr_support7']],
      [expect.stringMatching(/^Remaining time on Support × 1/), ['txr_support7']],
      [expect.stringMatching(/^Unused time on Basic × 1/), ['txr_plan16']],
      [expect.stringMatching(/^Remaining time on Pro × 1/), ['txr_pro18']],
    ]);
  });

  it('a plan or add-on naming none leaves its lines without, for the invoice\'s other rules to choose', () => {
    const untaxed = addAddOn(active(1), SUPPORT, 1, at(15)).subscription;
    expect(upcomingInvoice(untaxed).price.lines.every((line) => line.taxRateIds === undefined)).toBe(true);
  });
});

describe('coupon durations', () => {
  it('once, repeating for n periods, forever: counted per billed period', () => {
    const once = startDiscount(coupon({ duration: 'once', durationInPeriods: null }), T0);
    expect(couponOfNextInvoice(once)).not.toBeNull();
    expect(afterBilledPeriod(once)).toBeNull();
    const repeating = startDiscount(coupon(), T0);
    expect(repeating.periodsRemaining).toBe(2);
    expect(afterBilledPeriod(afterBilledPeriod(repeating))).toBeNull();
    const forever = startDiscount(coupon({ duration: 'forever', durationInPeriods: null }), T0);
    expect(afterBilledPeriod(forever)).toBe(forever);
  });

  it('a repeating coupon applied mid-period discounts the next two renewals and then stops', () => {
    const discounted = applyDiscount(active(2), coupon(), at(3)).subscription;
    expect(upcomingInvoice(discounted).price.discount).toBe(500);
    expect(renewals(discounted, 4).totals).toEqual([1_500, 1_500, 2_000, 2_000]);
    expect(renewals(applyDiscount(active(2), coupon({ duration: 'forever', durationInPeriods: null }), at(3)).subscription, 3).totals).toEqual([1_500, 1_500, 1_500]);
    expect(renewals(applyDiscount(active(2), coupon({ duration: 'once', durationInPeriods: null }), at(3)).subscription, 2).totals).toEqual([1_500, 2_000]);
    expect(removeDiscount(discounted, at(4)).subscription.discount).toBeNull();
    expect(failure(() => removeDiscount(active(), at(4)))).toMatchObject({ code: 'subscription_no_discount' });
  });

  it('a downgrade whose credit exceeds the next invoice carries the rest to the one after', () => {
    const pro = changePlanNow(active(2), { plan: PRO }, at(0.001)).subscription;
    const back = changePlanNow({ ...pro, pendingItems: [] }, { plan: BASIC, quantity: 1 }, at(1));
    // Credit 29/30 of 6000 = 5800; charge 29/30 of 1000 = 967; next period 1000: 1000 − 5800 + 967 = −3833.
    const first = renew(back.subscription, back.subscription.currentPeriodEnd, back.subscription.currentPeriodEnd);
    expect(first.invoice!.price).toMatchObject({ subtotal: 0, total: 0, creditCarried: 3_833 });
    expect(first.subscription.pendingItems).toEqual([{ description: 'Credit carried from the previous invoice', amount: -3_833 }]);
    const { totals } = renewals(first.subscription, 4);
    expect(totals).toEqual([0, 0, 0, 1_000 - 833]);
  });
});

describe('upcoming invoice', () => {
  it('answers 409 when the next move bills nothing', () => {
    const ending: Subscription = { ...active(), cancelAtPeriodEnd: true };
    expect(failure(() => upcomingInvoice(ending))).toMatchObject({ kind: 'not_found', code: 'subscription_no_upcoming_invoice' });
    expect(failure(() => upcomingInvoice(pause(active(), null, at(1)).subscription))).toMatchObject({ code: 'subscription_no_upcoming_invoice' });
  });
});
