import type { PricedComponent, PricedPlan } from '@recur/pricing';
import { afterBilledPeriod, type RedeemedCoupon, startDiscount } from '../src/subscriptions/discount';
import {
  cancelAtPeriodEnd,
  cancelNow,
  createSubscription,
  finalUsageToBill,
  invoiceLineKind,
  pause,
  type PeriodUsage,
  priceFinalInvoice,
  renew,
  type Subscription,
} from '../src/subscriptions/subscription';
import { changePlanNow } from '../src/subscriptions/subscription-changes';

const tenant = { accountId: 'acct_1', livemode: false };
const API: PricedComponent = { id: 'pc_api', type: 'metered', name: 'API calls', metricName: 'api_calls', unitAmount: 2, includedQuantity: 1_000 };
const SEAT_FEE: PricedComponent = { id: 'pc_fee', type: 'fixed', name: 'Platform fee', metricName: null, unitAmount: 500, includedQuantity: 0 };
const plan = (components: PricedComponent[]): PricedPlan => ({ name: 'Team', pricingModel: 'per_unit', amountMonthly: 1_000, currency: 'usd', packageSize: 1, tiers: [], components });
const METERED = plan([API, SEAT_FEE]);
// 2026-04-01 → 2026-05-01: a 30-day period.
const T0 = new Date('2026-04-01T00:00:00Z');
const MAY = new Date('2026-05-01T00:00:00Z');
const at = (days: number) => new Date(T0.getTime() + days * 86_400_000);
const seconds = (date: Date) => date.getTime() / 1000;

function subscribed(price = METERED, fields: { billingCycles?: number; trialDays?: number; quantity?: number } = {}): Subscription {
  return createSubscription(tenant, { customerId: 'cus_1', planId: 'plan_team', price, planIntervals: ['monthly'], billingInterval: 'monthly', testClockId: null, ...fields }, T0).subscription;
}

const usageOf = (quantity: number, end = MAY): PeriodUsage => [{ metricName: 'api_calls', period: { start: T0, end }, quantity, billedBefore: 0, late: false }];
const coupon = (duration: 'once' | 'forever', percentOff: number): RedeemedCoupon => ({
  coupon: { id: 'co_1', name: `${percentOff} % off`, type: 'percentage', value: percentOff, currency: null },
  duration, durationInPeriods: null, promotionCodeId: 'promo_1', promotionCode: 'SAVE',
});
const linesOf = (price: ReturnType<typeof priceFinalInvoice>) => price.lines.map((line) => ({ kind: invoiceLineKind(line), amount: line.amount }));

describe('the final invoice of a subscription (docs/api/subscriptions.md#final-invoice)', () => {
  describe('its price (priceFinalInvoice)', () => {
    it('bills only what the period left unbilled: the usage in arrears and the pending prorations; no plan, fixed component or add-on line', () => {
      const changed = changePlanNow(subscribed(METERED, { quantity: 2 }), { quantity: 5 }, at(15)).subscription;
      const price = priceFinalInvoice(changed, usageOf(1_500));
      // 1 500 used, 1 000 included: 500 × 2. Quantity 2 → 5 at mid-period, plan and fixed fee:
      // −(2 × 1 000 + 500) / 2 + (5 × 1 000 + 500) / 2.
      expect(linesOf(price)).toEqual([{ kind: 'usage', amount: 1_000 }, { kind: 'proration', amount: -1_250 }, { kind: 'proration', amount: 2_750 }]);
      expect(price).toMatchObject({ subtotal: 2_500, discount: 0, total: 2_500, creditCarried: 0 });
    });

    it('takes the coupon the next invoice would take', () => {
      const discounted: Subscription = { ...subscribed(), discount: startDiscount(coupon('forever', 10), T0) };
      expect(priceFinalInvoice(discounted, usageOf(2_000))).toMatchObject({ subtotal: 2_000, discount: 200, total: 1_800 });
      // A coupon whose periods are used up takes nothing.
      expect(afterBilledPeriod(startDiscount(coupon('once', 50), T0))).toBeNull();
      const once: Subscription = { ...subscribed(), discount: { ...startDiscount(coupon('once', 50), T0), periodsRemaining: 0 } };
      expect(priceFinalInvoice(once, usageOf(2_000))).toMatchObject({ discount: 0, total: 2_000 });
    });

    it('keeps credit beyond the charges as a negative total (invoicing makes it customer balance), with no line dropping it', () => {
      const credited = changePlanNow(subscribed(METERED, { quantity: 5 }), { quantity: 1 }, at(15)).subscription;
      const price = priceFinalInvoice(credited, usageOf(1_100));
      // −2 750 + 750 of proration against 200 of usage: −1 800, undiscounted.
      expect(linesOf(price)).toEqual([{ kind: 'usage', amount: 200 }, { kind: 'proration', amount: -2_750 }, { kind: 'proration', amount: 750 }]);
      expect(price).toMatchObject({ subtotal: -1_800, discount: 0, total: -1_800, creditCarried: 0 });
      // Cancelled now, that credit alone still raises a final invoice.
      expect(cancelNow(changePlanNow(subscribed(plan([]), { quantity: 5 }), { quantity: 1 }, at(15)).subscription, at(20)).finalInvoice).toMatchObject({ price: { total: -2_000 } });
    });
  });

  describe('cancel now', () => {
    it('raises the final invoice now with the pending proration and the usage so far, and leaves nothing pending', () => {
      const changed = changePlanNow(subscribed(METERED, { quantity: 2 }), { quantity: 5 }, at(15)).subscription;
      const change = cancelNow(changed, at(20), usageOf(1_200, at(20)));
      // 200 units over the included at 2, and the proration (−1 250 + 2 750).
      expect(change.finalInvoice).toMatchObject({ periodStart: T0, periodEnd: at(20), billingReason: 'subscription_final', price: { total: 400 + 1_500 } });
      expect(change.subscription).toMatchObject({ status: 'cancelled', pendingItems: [] });
      expect(change.invoice).toBeUndefined();
      // The usage line names its own span: the period up to the cancel.
      expect(change.finalInvoice!.price.lines[0]).toMatchObject({ metricName: 'api_calls', period: { start: seconds(T0), end: seconds(at(20)) } });
    });

    it('measures the usage of the period so far (to the cancel), or of the period a pause interrupted; none while trialing', () => {
      const active = subscribed();
      expect(finalUsageToBill(active, at(20))).toEqual({ period: { start: T0, end: at(20) }, billingInterval: 'monthly', metricNames: ['api_calls'], billingKey: `usage:${active.id}:${seconds(T0)}` });
      expect(finalUsageToBill(pause(active, null, at(10)).subscription, at(20))).toMatchObject({ period: { start: T0, end: MAY } });
      expect(finalUsageToBill(subscribed(METERED, { trialDays: 14 }), at(5))).toBeNull();
      expect(finalUsageToBill(cancelNow(active, at(2)).subscription, at(3))).toBeNull();
    });

    it('raises no final invoice when nothing is left to bill: no usage beyond the included, no pending charge', () => {
      expect(cancelNow(subscribed(), at(20), usageOf(900, at(20))).finalInvoice).toBeUndefined();
      expect(cancelNow(subscribed(plan([])), at(20)).finalInvoice).toBeUndefined();
    });
  });

  describe('cancel now with prorate', () => {
    const SUPPORT = { addOn: { id: 'addon_support', name: 'Support', priceMonthly: 300, currency: 'usd', onSale: true, taxRateIds: ['txr_levy'] }, quantity: 2 };

    it('credits the unused time of the plan (base and fixed lines, per quantity) and each add-on, with their tax rates, less the discount the period invoice applied', () => {
      const price: PricedPlan = { ...plan([SEAT_FEE]), taxRateIds: ['txr_vat'] };
      const discount = startDiscount(coupon('once', 10), T0);
      const sold = createSubscription(tenant, { customerId: 'cus_1', planId: 'plan_team', price, planIntervals: ['monthly'], billingInterval: 'monthly', testClockId: null, quantity: 3, addOns: [SUPPORT], discount }, T0).subscription;
      // The period invoice: 3 × 1 000 + 500 + 2 × 300 = 4 100, 10 % off (410) — the coupon is used up now.
      expect(sold).toMatchObject({ discount: null, periodDiscount: { amount: 410, base: 4_100, periodStart: seconds(T0) } });
      const change = cancelNow(sold, at(20), [], { prorate: true });
      // A third of the period is left: (3 500 − 350) / 3 = 1 050 and (600 − 60) / 3 = 180.
      expect(change.finalInvoice!.price.lines.map((line) => [invoiceLineKind(line), line.description, line.amount, line.taxRateIds])).toEqual([
        ['proration', 'Unused time on Team after 2026-04-21', -1_050, ['txr_vat']],
        ['proration', 'Unused time on Support after 2026-04-21', -180, ['txr_levy']],
      ]);
      expect(change.finalInvoice!.price).toMatchObject({ subtotal: -1_230, discount: 0, total: -1_230 });
      // Without prorate: nothing to bill, no final invoice (Stripe's default).
      expect(cancelNow(sold, at(20)).finalInvoice).toBeUndefined();
      // A discount kept for another period (written by an older release mid-rollout) is not trusted: credited undiscounted.
      const stale = { ...sold, periodDiscount: { amount: 410, base: 4_100, periodStart: seconds(T0) - 1 } };
      // 3 500 / 3 = 1 166.67 → 1 167 and 600 / 3 = 200.
      expect(cancelNow(stale, at(20), [], { prorate: true }).finalInvoice!.price.total).toBe(-1_367);
    });

    it('the coupon still running discounts the usage only: the credit, net of the period invoice\'s discount already, is not discounted twice', () => {
      const discount = startDiscount(coupon('forever', 10), T0);
      const sold = createSubscription(tenant, { customerId: 'cus_1', planId: 'plan_team', price: METERED, planIntervals: ['monthly'], billingInterval: 'monthly', testClockId: null, discount }, T0).subscription;
      // Period invoice 1 000 + 500, 10 % off (150). Cancelled with a third left: −(1 500 − 150) / 3 = −450.
      // Usage 3 500 (2 500 beyond the included, 5 000), 10 % off (500): 5 000 − 500 − 450 = 4 050.
      const change = cancelNow(sold, at(20), usageOf(3_500, at(20)), { prorate: true });
      expect(linesOf(change.finalInvoice!.price)).toEqual([{ kind: 'usage', amount: 5_000 }, { kind: 'proration', amount: -450 }]);
      expect(change.finalInvoice!.price).toMatchObject({ subtotal: 4_550, discount: 500, total: 4_050 });
    });

    it('credits nothing for a trial or a paused subscription (no period was paid in advance)', () => {
      expect(cancelNow(subscribed(plan([]), { trialDays: 14 }), at(5), [], { prorate: true }).finalInvoice).toBeUndefined();
      expect(cancelNow(pause(subscribed(plan([])), null, at(5)).subscription, at(10), [], { prorate: true }).finalInvoice).toBeUndefined();
    });
  });

  describe('end at the period end', () => {
    it('cancel at period end: the renewal step ends it and bills the ended period\'s usage on a final invoice, no period invoice', () => {
      const ending = cancelAtPeriodEnd(subscribed(), at(10)).subscription;
      const change = renew(ending, MAY, MAY, usageOf(1_500));
      expect(change.subscription.status).toBe('cancelled');
      expect(change.invoice).toBeUndefined();
      expect(change.finalInvoice).toMatchObject({ periodStart: T0, periodEnd: MAY, billingReason: 'subscription_final', price: { total: 1_000 } });
      expect(linesOf(change.finalInvoice!.price)).toEqual([{ kind: 'usage', amount: 1_000 }]);
    });

    it('the last billing cycle: completion bills the last period\'s usage on a final invoice', () => {
      const last = subscribed(METERED, { billingCycles: 1 });
      const change = renew(last, MAY, MAY, usageOf(1_250));
      expect(change.subscription.status).toBe('completed');
      expect(change.finalInvoice).toMatchObject({ billingReason: 'subscription_final', price: { total: 500 } });
    });

    it('raises nothing when the ended period has no usage to bill and no pending proration', () => {
      expect(renew(cancelAtPeriodEnd(subscribed(), at(10)).subscription, MAY, MAY, usageOf(0)).finalInvoice).toBeUndefined();
      expect(renew(cancelAtPeriodEnd(subscribed(plan([])), at(10)).subscription, MAY, MAY).finalInvoice).toBeUndefined();
    });
  });
});
