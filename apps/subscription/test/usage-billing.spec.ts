import type { PricedComponent, PricedPlan } from '@recur/pricing';
import {
  cancelAtPeriodEnd,
  createSubscription,
  cutUsageToBill,
  invoiceLineKind,
  invoiceLinePeriod,
  pause,
  type PeriodUsage,
  renew,
  resume,
  type Subscription,
  upcomingInvoice,
  usagePeriodToBill,
} from '../src/subscriptions/subscription';
import { changeBillingInterval, schedulePlanChange } from '../src/subscriptions/subscription-changes';

const tenant = { accountId: 'acct_1', livemode: false };
const API: PricedComponent = { id: 'pc_api', type: 'metered', name: 'API calls', metricName: 'api_calls', unitAmount: 2, includedQuantity: 1_000, usageLimit: 5_000 };
const plan = (components: PricedComponent[], amountMonthly = 2_900, name = 'Team'): PricedPlan => ({ name, pricingModel: 'flat_rate', amountMonthly, currency: 'usd', packageSize: 1, tiers: [], components });
const METERED = plan([API]);
// 2026-04-01 → 2026-05-01 (the first period), then 2026-05-01 → 2026-06-01.
const T0 = new Date('2026-04-01T00:00:00Z');
const MAY = new Date('2026-05-01T00:00:00Z');
const seconds = (date: Date) => date.getTime() / 1000;

function subscribed(price = METERED, trialDays?: number): Subscription {
  return createSubscription(tenant, { customerId: 'cus_1', planId: 'plan_team', price, planIntervals: ['monthly'], billingInterval: 'monthly', testClockId: null, trialDays }, T0).subscription;
}

const usageOf = (quantity: number, extra: Partial<PeriodUsage[number]> = {}): PeriodUsage => [
  { metricName: 'api_calls', period: { start: T0, end: MAY }, quantity, billedBefore: 0, late: false, ...extra },
];

describe('usage on period invoices (docs/api/usage.md#billing-in-arrears)', () => {
  it('bills the ended period\'s usage in arrears on the renewal invoice: metric, units beyond the included quantity, and the usage period', () => {
    const renewal = renew(subscribed(), MAY, MAY, usageOf(1_500)).invoice!;
    expect(renewal.periodStart).toEqual(MAY);
    const lines = renewal.price.lines.map((line) => ({ kind: invoiceLineKind(line), description: line.description, quantity: line.quantity, amount: line.amount, period: line.period }));
    expect(lines).toStrictEqual([
      { kind: 'plan', description: 'Team', quantity: 1, amount: 2_900, period: undefined },
      { kind: 'usage', description: 'API calls (api_calls): 1500 used, 1000 included', quantity: 500, amount: 1_000, period: { start: seconds(T0), end: seconds(MAY) } },
    ]);
    expect(renewal.price.total).toBe(2_900 + 1_000);
  });

  it('gives each usage line its own period on the invoice, the invoice period to the other lines, none to a proration', () => {
    const renewal = renew(subscribed(), MAY, MAY, usageOf(1_500)).invoice!;
    const invoicePeriod = { start: seconds(renewal.periodStart), end: seconds(renewal.periodEnd) };
    const periods = renewal.price.lines.map((line) => invoiceLinePeriod(invoiceLineKind(line), line.period, invoicePeriod));
    expect(periods).toEqual([invoicePeriod, { start: seconds(T0), end: seconds(MAY) }]);
    expect(invoiceLinePeriod('proration', undefined, invoicePeriod)).toBeNull();
  });

  it('bills usage of the included quantity at 0, and a period with no usage as a 0 line', () => {
    const lines = (used: number) => renew(subscribed(), MAY, MAY, usageOf(used)).invoice!.price.lines.filter((line) => line.metricName);
    expect(lines(999)).toMatchObject([{ quantity: 0, amount: 0 }]);
    expect(lines(0)).toMatchObject([{ quantity: 0, amount: 0, description: 'API calls (api_calls): 0 used, 1000 included' }]);
  });

  it('prices late usage of an earlier, already invoiced period on top of what that invoice billed, naming the earlier period', () => {
    const april = subscribed();
    const may = renew(april, MAY, MAY, usageOf(800)).subscription;
    const usage: PeriodUsage = [
      { metricName: 'api_calls', period: { start: MAY, end: may.currentPeriodEnd }, quantity: 100, billedBefore: 0, late: false },
      // 800 of April's 1 000 free units were billed; 300 more arrived after: 200 free, 100 billable.
      { metricName: 'api_calls', period: { start: T0, end: MAY }, quantity: 300, billedBefore: 800, late: true },
    ];
    const late = renew(may, may.currentPeriodEnd, may.currentPeriodEnd, usage).invoice!.price.lines.filter((line) => line.metricName)[1];
    expect(late).toMatchObject({ description: 'API calls (api_calls): 300 more reported after the period was invoiced', quantity: 100, amount: 200, period: { start: seconds(T0), end: seconds(MAY) } });
  });

  it('prices the ended period\'s usage at the price it was used under when a plan change applies at the renewal', () => {
    const dearer = plan([{ ...API, id: 'pc_api_pro', unitAmount: 10, includedQuantity: 0 }], 9_900, 'Pro');
    const changing = schedulePlanChange(subscribed(), { plan: { id: 'plan_pro', price: dearer, billingIntervals: ['monthly'] } }, new Date('2026-04-10T00:00:00Z')).subscription;
    const lines = renew(changing, MAY, MAY, usageOf(1_500)).invoice!.price.lines;
    expect(lines.find((line) => line.kind === 'plan')).toMatchObject({ description: 'Pro', amount: 9_900 });
    expect(lines.find((line) => line.metricName)).toMatchObject({ quantity: 500, amount: 1_000, unitAmount: 2 });
  });

  it('bills no metered line in advance: the first invoice of a period has none', () => {
    const created = createSubscription(tenant, { customerId: 'cus_1', planId: 'plan_team', price: METERED, planIntervals: ['monthly'], billingInterval: 'monthly', testClockId: null }, T0);
    expect(created.invoice!.price.lines.map((line) => invoiceLineKind(line))).toEqual(['plan']);
  });

  it('previews exactly what the renewal bills, from the same usage', () => {
    const subscription = subscribed();
    expect(upcomingInvoice(subscription, usageOf(1_234))).toEqual(renew(subscription, MAY, MAY, usageOf(1_234)).invoice);
  });

  it('resumes bill the usage of the period the pause interrupted', () => {
    const paused = pause(subscribed(), new Date('2026-04-20T00:00:00Z'), new Date('2026-04-10T00:00:00Z')).subscription;
    expect(usagePeriodToBill(paused)).toMatchObject({ period: { start: T0, end: MAY }, metricNames: ['api_calls'] });
    const invoice = resume(paused, new Date('2026-04-20T00:00:00Z'), new Date('2026-04-20T00:00:00Z'), usageOf(1_100)).invoice!;
    expect(invoice.price.lines.find((line) => line.metricName)).toMatchObject({ quantity: 100, amount: 200, period: { start: seconds(T0), end: seconds(MAY) } });
  });

  describe('a billing-interval change (docs/api/usage.md#a-billing-interval-change)', () => {
    const CUT = new Date('2026-04-16T00:00:00Z');
    const cutUsage = (quantity: number, extra: Partial<PeriodUsage[number]> = {}): PeriodUsage => usageOf(quantity, { period: { start: T0, end: CUT }, interval: 'monthly', ...extra });

    it('bills the cut period\'s usage on the change\'s invoice, under that period\'s key, on the old interval\'s included quantity', () => {
      const monthly = subscribed();
      expect(cutUsageToBill(monthly, CUT)).toEqual({ period: { start: T0, end: CUT }, billingInterval: 'monthly', metricNames: ['api_calls'], billingKey: `usage:${monthly.id}:${seconds(T0)}` });
      const change = changeBillingInterval(monthly, 'yearly', ['monthly', 'yearly'], CUT, cutUsage(1_500));
      expect(change.invoice).toMatchObject({ billingReason: 'subscription_update', periodStart: CUT });
      const lines = change.invoice!.price.lines.map((line) => [invoiceLineKind(line), line.description, line.quantity, line.amount, line.period]);
      // 1 000 included (a month's), not 12 000 (the yearly invoice's); the unused 15 of 30 days credited.
      expect(lines).toEqual([
        ['plan', 'Team', 1, 12 * 2_900, undefined],
        ['usage', 'API calls (api_calls): 1500 used, 1000 included', 500, 1_000, { start: seconds(T0), end: seconds(CUT) }],
        ['proration', 'Unused time on Team (monthly) after 2026-04-16', 1, -1_450, undefined],
      ]);
      expect(change.invoice!.price.total).toBe(12 * 2_900 + 1_000 - 1_450);
    });

    it('bills late records of the cut period on the next renewal at the old interval\'s allowance, once', () => {
      const yearly = changeBillingInterval(subscribed(), 'yearly', ['monthly', 'yearly'], CUT, cutUsage(900)).subscription;
      const end = yearly.currentPeriodEnd;
      const usage: PeriodUsage = [
        { metricName: 'api_calls', period: { start: CUT, end }, quantity: 5_000, billedBefore: 0, late: false, interval: 'yearly' },
        // 900 of the month's 1 000 free were billed; 300 more arrived: 100 free, 200 billable.
        ...cutUsage(300, { billedBefore: 900, late: true }),
      ];
      const renewal = renew(yearly, end, end, usage).invoice!;
      expect(renewal.price.lines.filter((line) => line.metricName).map((line) => [line.quantity, line.amount])).toEqual([[0, 0], [200, 400]]);
      expect(upcomingInvoice(yearly, usage)).toEqual(renewal);
    });

    it('a change while paused leaves the interrupted period on its interval: the resume bills its usage on that allowance', () => {
      const paused = pause(subscribed(), null, new Date('2026-04-10T00:00:00Z')).subscription;
      const yearlyPaused = changeBillingInterval(paused, 'yearly', ['monthly', 'yearly'], CUT).subscription;
      expect(usagePeriodToBill(yearlyPaused)).toMatchObject({ period: { start: T0, end: MAY }, billingInterval: 'monthly' });
      const resumed = resume(yearlyPaused, CUT, CUT, usageOf(1_500, { interval: 'monthly' }));
      expect(resumed.subscription).toMatchObject({ billingInterval: 'yearly', currentPeriodStart: CUT });
      expect(resumed.invoice!.price.lines.find((line) => line.metricName)).toMatchObject({ quantity: 500, amount: 1_000 });
    });

    it('a trialing or paused subscription starts no period on the change: nothing is cut, nothing measured', () => {
      expect(cutUsageToBill(subscribed(METERED, 14), CUT)).toBeNull();
      expect(cutUsageToBill(pause(subscribed(), null, new Date('2026-04-10T00:00:00Z')).subscription, CUT)).toBeNull();
      expect(cutUsageToBill(subscribed(plan([])), CUT)).toBeNull();
    });
  });

  describe('which period a move bills (usagePeriodToBill)', () => {
    it('a renewal bills the period that ends, keyed by that period', () => {
      expect(usagePeriodToBill(subscribed())).toEqual({ period: { start: T0, end: MAY }, billingInterval: 'monthly', metricNames: ['api_calls'], billingKey: expect.stringMatching(new RegExp(`^usage:sub_.+:${seconds(T0)}$`)) });
    });

    it('a subscription ending at its period end bills that period (on its final invoice), under the same period key', () => {
      const ending = cancelAtPeriodEnd(subscribed(), new Date('2026-04-10T00:00:00Z')).subscription;
      expect(usagePeriodToBill(ending)).toEqual({ period: { start: T0, end: MAY }, billingInterval: 'monthly', metricNames: ['api_calls'], billingKey: `usage:${ending.id}:${seconds(T0)}` });
    });

    it('a trial\'s usage is free, a plan without metered components has nothing to measure', () => {
      expect(usagePeriodToBill(subscribed(METERED, 14))).toBeNull();
      expect(usagePeriodToBill(subscribed(plan([])))).toBeNull();
    });
  });
});
