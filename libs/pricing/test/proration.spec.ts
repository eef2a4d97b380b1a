import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { appliedDiscountOf, CREDIT_CARRIED_DESCRIPTION, pricePeriod, type PricedPlan, prorate, unusedTimeCredits } from '../src';

function failure(run: () => unknown): { code: string; param?: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('expected a DomainError');
}

const plan = (overrides: Partial<PricedPlan> = {}): PricedPlan => ({
  name: 'Pro', pricingModel: 'flat_rate', amountMonthly: 3_000, currency: 'usd', packageSize: 1, tiers: [], components: [], ...overrides,
});

// A 30-day period: 2 592 000 seconds.
const period = { start: 1_000_000, end: 1_000_000 + 30 * 86_400 };

describe('prorate: the part of a period price after a moment, to the second, half up once', () => {
  it('prorates by seconds left over seconds in the period', () => {
    expect(prorate(3_000, period, period.start)).toBe(3_000);
    expect(prorate(3_000, period, period.start + 10 * 86_400)).toBe(2_000);
    expect(prorate(3_000, period, period.start + 15 * 86_400)).toBe(1_500);
    expect(prorate(3_000, period, period.end)).toBe(0);
    // One second in: 3000 × 2 591 999 / 2 592 000 = 2999.9988… → 3000.
    expect(prorate(3_000, period, period.start + 1)).toBe(3_000);
    // 1 × 1 296 000 / 2 592 000 = 0.5 exactly → 1 (half up), and −0.5 → −1 (symmetric).
    expect(prorate(1, period, period.start + 15 * 86_400)).toBe(1);
    expect(prorate(-1, period, period.start + 15 * 86_400)).toBe(-1);
  });

  it('clamps moments outside the period: before it all, after it nothing', () => {
    expect(prorate(3_000, period, period.start - 500)).toBe(3_000);
    expect(prorate(3_000, period, period.end + 500)).toBe(0);
  });

  it('refuses a period that does not end after it starts, fractional amounts and times, naming the field', () => {
    expect(failure(() => prorate(100, { start: 10, end: 10 }, 5))).toEqual({ code: 'parameter_invalid', param: 'period' });
    expect(failure(() => prorate(100, { start: 10, end: 9 }, 5))).toEqual({ code: 'parameter_invalid', param: 'period' });
    expect(failure(() => prorate(100, { start: 10.5, end: 20 }, 15))).toEqual({ code: 'parameter_invalid', param: 'period' });
    expect(failure(() => prorate(100, { start: 10, end: 20.5 }, 15))).toEqual({ code: 'parameter_invalid', param: 'period' });
    expect(failure(() => prorate(100, period, period.start + 0.5))).toEqual({ code: 'parameter_invalid', param: 'at' });
    expect(failure(() => prorate(10.5, period, period.start))).toEqual({ code: 'parameter_invalid', param: 'amount' });
    expect(prorate(100, { start: 10, end: 11 }, 10)).toBe(100);
  });

  it('a credit and a charge of the same price cancel exactly, whatever the moment', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: period.start, max: period.end }), (amount, at) => {
      expect(-prorate(amount, period, at) + prorate(amount, period, at)).toBe(0);
      const part = prorate(amount, period, at);
      expect(part).toBeGreaterThanOrEqual(0);
      expect(part).toBeLessThanOrEqual(amount);
      // Exactly the half-up rounding of the real fraction.
      expect(part).toBe(Math.floor((2 * amount * (period.end - at) + (period.end - period.start)) / (2 * (period.end - period.start))));
    }));
  });
});

describe('pricePeriod with add-ons and adjustments', () => {
  it('bills add-ons monthly × interval months × quantity, and adjustments as they are', () => {
    const price = pricePeriod({
      plan: plan(),
      interval: 'quarterly',
      addOns: [{ id: 'addon_1', name: 'Support', priceMonthly: 500, quantity: 2 }],
      adjustments: [{ description: 'Unused time', amount: -1_000 }, { description: 'Remaining time', amount: 400 }],
    });
    expect(price.lines.map((line) => [line.kind, line.amount])).toEqual([['plan', 9_000], ['addon', 3_000], ['adjustment', -1_000], ['adjustment', 400]]);
    expect(price.lines[1]).toMatchObject({ addonId: 'addon_1', quantity: 2, unitAmount: 1_500 });
    expect(price).toMatchObject({ subtotal: 11_400, discount: 0, total: 11_400, creditCarried: 0 });
  });

  it('a coupon discounts the subtotal with the prorations in it', () => {
    const price = pricePeriod({ plan: plan(), adjustments: [{ description: 'Unused time', amount: -1_001 }], coupon: { id: 'c', name: '50 %', type: 'percentage', value: 50, currency: null } });
    expect(price).toMatchObject({ subtotal: 1_999, discount: 1_000, total: 999 });
  });

  it('credit beyond the charges bills 0 and carries the rest out on a last line', () => {
    const price = pricePeriod({ plan: plan(), adjustments: [{ description: 'Unused time', amount: -5_000 }], coupon: { id: 'c', name: 'ten', type: 'fixed_amount', value: 1_000, currency: 'usd' } });
    expect(price.lines.at(-1)).toMatchObject({ kind: 'adjustment', description: 'Unused credit carried to the next invoice', amount: 2_000 });
    expect(CREDIT_CARRIED_DESCRIPTION).toBe('Unused credit carried to the next invoice');
    expect(price).toMatchObject({ subtotal: 0, discount: 0, total: 0, creditCarried: 2_000 });
    expect(price.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(0);
  });

  it('refuses an add-on quantity below 1, naming the field', () => {
    expect(failure(() => pricePeriod({ plan: plan(), addOns: [{ id: 'a', name: 'A', priceMonthly: 1, quantity: 0 }] }))).toEqual({ code: 'parameter_invalid', param: 'add_ons.quantity' });
    expect(failure(() => pricePeriod({ plan: plan(), addOns: [{ id: 'a', name: 'A', priceMonthly: 1, quantity: 1.5 }] }))).toEqual({ code: 'parameter_invalid', param: 'add_ons.quantity' });
    expect(pricePeriod({ plan: plan(), addOns: [{ id: 'a', name: 'A', priceMonthly: 7, quantity: 1 }] }).total).toBe(3_007);
  });
});

describe('proration credit and charge: the price difference over the time left, to the minor unit', () => {
  it('a change credits the old price and charges the new one: together within one minor unit of the exact difference (never a whole unit off)', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 100_000_000 }), fc.integer({ min: 0, max: 100_000_000 }),
      fc.integer({ min: 1, max: 400 * 86_400 }), fc.double({ min: 0, max: 1, noNaN: true }),
      (oldPrice, newPrice, length, where) => {
        const span = { start: 1_700_000_000, end: 1_700_000_000 + length };
        const at = span.start + Math.floor(where * length);
        const credit = -prorate(oldPrice, span, at);
        const charge = prorate(newPrice, span, at);
        // The exact difference (newPrice − oldPrice) × left / length, as a fraction: compare without floating point.
        const left = BigInt(span.end - at);
        const exactTimesLength = BigInt(newPrice - oldPrice) * left;
        const sumTimesLength = BigInt(credit + charge) * BigInt(length);
        const gap = sumTimesLength - exactTimesLength;
        expect(gap < BigInt(length) && gap > -BigInt(length)).toBe(true);
      },
    ));
  });

  it('the credit for unused time never exceeds what the period invoice charged, whatever the coupon, add-ons and moment', () => {
    const discounted = fc.record({
      amountMonthly: fc.integer({ min: 0, max: 5_000_000 }),
      quantity: fc.integer({ min: 1, max: 50 }),
      fixed: fc.integer({ min: 0, max: 200_000 }),
      addOns: fc.array(fc.record({ price: fc.integer({ min: 1, max: 100_000 }), quantity: fc.integer({ min: 1, max: 20 }) }), { maxLength: 4 }),
      coupon: fc.option(fc.oneof(
        fc.record({ type: fc.constant('percentage' as const), value: fc.integer({ min: 1, max: 10_000 }).map((bp) => bp / 100) }),
        fc.record({ type: fc.constant('fixed_amount' as const), value: fc.integer({ min: 1, max: 10_000_000 }) }),
      )),
      where: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(fc.property(discounted, ({ amountMonthly, quantity, fixed, addOns, coupon, where }) => {
      const price = pricePeriod({
        plan: plan({ pricingModel: 'per_unit', amountMonthly, components: fixed > 0 ? [{ id: 'pc_1', type: 'fixed', name: 'Support', metricName: null, unitAmount: fixed, includedQuantity: 0 }] : [], taxRateIds: ['txr_plan'] }),
        quantity,
        addOns: addOns.map((addOn, index) => ({ id: `addon_${index}`, name: `Add-on ${index}`, priceMonthly: addOn.price, quantity: addOn.quantity, taxRateIds: [`txr_${index}`] })),
        coupon: coupon && { id: 'co_1', name: 'Off', type: coupon.type, value: coupon.value, currency: 'usd' },
      });
      const at = period.start + Math.floor(where * (period.end - period.start));
      const credits = unusedTimeCredits(price.lines, appliedDiscountOf(price), period, at);
      const creditSum = (list: typeof credits) => list.reduce((total, credit) => total - credit.amount, 0);
      const credited = creditSum(credits);
      expect(credited).toBeGreaterThanOrEqual(0);
      expect(credited).toBeLessThanOrEqual(price.total);
      // Cancelled at the period's start, exactly the whole charge comes back.
      expect(creditSum(unusedTimeCredits(price.lines, appliedDiscountOf(price), period, period.start))).toBe(price.total);
      // Each credit carries the tax rates of what it credits.
      for (const credit of credits) expect(credit.taxRateIds).toEqual([credit.addonId ? `txr_${credit.addonId.slice('addon_'.length)}` : 'txr_plan']);
    }));
  });

  it('credits ten days into a 30-day period two thirds of the charge, less two thirds of a 10 % coupon', () => {
    const price = pricePeriod({ plan: plan({ amountMonthly: 3_000 }), coupon: { id: 'co_1', name: '10 %', type: 'percentage', value: 10, currency: null } });
    expect(price.total).toBe(2_700);
    expect(unusedTimeCredits(price.lines, appliedDiscountOf(price), period, period.start + 10 * 86_400)).toEqual([{ amount: -1_800 }]);
  });

  it('keeps a negative total when asked (a final invoice), undiscounted, and carries it otherwise', () => {
    const input = { plan: plan({ amountMonthly: 0 }), adjustments: [{ description: 'Unused time', amount: -1_000 }], coupon: { id: 'co_1', name: '10 %', type: 'percentage' as const, value: 10, currency: null } };
    expect(pricePeriod({ ...input, creditBeyondCharges: 'keep' })).toMatchObject({ subtotal: -1_000, discount: 0, total: -1_000, creditCarried: 0 });
    expect(pricePeriod(input)).toMatchObject({ subtotal: 0, total: 0, creditCarried: 1_000 });
  });
});
