import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { checkTiers, graduatedLines, pricePeriod, type PricedPlan, roundHalfUp, type Tier, type UsageCharge, usageLine, volumeLines } from '../src';

const plan = (overrides: Partial<PricedPlan> = {}): PricedPlan => ({
  name: 'Pro',
  pricingModel: 'flat_rate',
  amountMonthly: 2_900,
  currency: 'usd',
  packageSize: 1,
  tiers: [],
  components: [],
  ...overrides,
});

const TIERS: Tier[] = [
  { upTo: 10, unitAmount: 500, flatAmount: 0 },
  { upTo: 50, unitAmount: 400, flatAmount: 1_000 },
  { upTo: null, unitAmount: 300, flatAmount: 0 },
];

function failure(run: () => unknown): { code: string; param?: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, param: error.param };
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('pricing models', () => {
  it('flat_rate ignores the quantity; other intervals multiply the monthly amount', () => {
    expect(pricePeriod({ plan: plan(), quantity: 7 }).total).toBe(2_900);
    expect(pricePeriod({ plan: plan(), interval: 'quarterly' }).total).toBe(8_700);
    expect(pricePeriod({ plan: plan(), interval: 'yearly' }).total).toBe(34_800);
  });

  it('per_unit multiplies by the quantity', () => {
    const price = pricePeriod({ plan: plan({ pricingModel: 'per_unit', amountMonthly: 1_000 }), quantity: 3 });
    expect(price).toMatchObject({ subtotal: 3_000, discount: 0, total: 3_000, currency: 'usd' });
    expect(price.lines).toEqual([expect.objectContaining({ kind: 'plan', quantity: 3, unitAmount: 1_000, amount: 3_000 })]);
  });

  it('package charges whole packages, rounding the count up', () => {
    const packaged = plan({ pricingModel: 'package', amountMonthly: 5_000, packageSize: 100 });
    expect(pricePeriod({ plan: packaged, quantity: 0 }).total).toBe(0);
    expect(pricePeriod({ plan: packaged, quantity: 100 }).total).toBe(5_000);
    expect(pricePeriod({ plan: packaged, quantity: 101 }).total).toBe(10_000);
  });

  it('graduated prices each slice in its tier, flat amounts once a tier is reached, plus the base fee', () => {
    const graduated = plan({ pricingModel: 'graduated', amountMonthly: 100, tiers: TIERS });
    const price = pricePeriod({ plan: graduated, quantity: 60 });
    // 100 base + 10×500 + (40×400 + 1000) + 10×300
    expect(price.total).toBe(100 + 5_000 + 17_000 + 3_000);
    expect(price.lines.map((item) => [item.kind, item.quantity])).toEqual([['plan', 1], ['tier', 10], ['tier', 40], ['tier', 10]]);
    expect(pricePeriod({ plan: { ...graduated, amountMonthly: 0 }, quantity: 0 }).lines).toEqual([]);
  });

  it('volume prices every unit at the tier the quantity falls in', () => {
    const volume = plan({ pricingModel: 'volume', amountMonthly: 0, tiers: TIERS });
    expect(pricePeriod({ plan: volume, quantity: 10 }).total).toBe(5_000);
    expect(pricePeriod({ plan: volume, quantity: 11 }).total).toBe(11 * 400 + 1_000);
    expect(pricePeriod({ plan: volume, quantity: 51 }).total).toBe(51 * 300);
  });

  it('a tiered plan without tiers cannot be priced', () => {
    expect(failure(() => pricePeriod({ plan: plan({ pricingModel: 'volume' }) }))).toMatchObject({ code: 'plan_tiers_missing' });
  });
});

describe('price components', () => {
  const components = [
    { id: 'pc_fixed', type: 'fixed' as const, name: 'Support', metricName: null, unitAmount: 990, includedQuantity: 0 },
    { id: 'pc_api', type: 'metered' as const, name: 'API calls', metricName: 'api_calls', unitAmount: 2, includedQuantity: 1_000 },
  ];

  const api = components[1];
  const period = { start: 1_790_000_000, end: 1_792_678_400 };
  const used = (quantity: number, extra: Partial<UsageCharge> = {}): UsageCharge[] => [{ component: api, quantity, period, ...extra }];

  it('adds fixed fees per month and metered usage beyond the included quantity', () => {
    const price = pricePeriod({ plan: plan({ components }), usage: used(1_500) });
    expect(price.total).toBe(2_900 + 990 + 500 * 2);
    expect(pricePeriod({ plan: plan({ components }), usage: used(999) }).total).toBe(2_900 + 990);
    expect(pricePeriod({ plan: plan({ components }), usage: used(0) }).total).toBe(2_900 + 990);
  });

  it('bills metered components only in arrears: without usage they add no line', () => {
    const price = pricePeriod({ plan: plan({ components }) });
    expect(price.total).toBe(2_900 + 990);
    expect(price.lines.some((item) => item.metricName)).toBe(false);
  });

  it('scales fixed fees and the included quantity by the interval, not the usage price', () => {
    const price = pricePeriod({ plan: plan({ components }), usage: used(3_500), interval: 'quarterly' });
    expect(price.total).toBe(3 * 2_900 + 3 * 990 + 500 * 2);
  });

  it("gives usage the included quantity of the interval it was used in, on an invoice of another interval", () => {
    // A monthly period cut short by a change to yearly: its 1 500 units get the monthly 1 000 free, not 12 000.
    const yearly = pricePeriod({ plan: plan({ components }), usage: used(1_500, { interval: 'monthly' }), interval: 'yearly' });
    expect(yearly.lines.find((item) => item.metricName)).toMatchObject({ quantity: 500, amount: 1_000, description: 'API calls (api_calls): 1500 used, 1000 included' });
    expect(yearly.total).toBe(12 * 2_900 + 12 * 990 + 500 * 2);
    // Its late records are priced on the monthly allowance too: 200 more, all billable.
    const late = pricePeriod({ plan: plan({ components }), usage: used(200, { interval: 'monthly', billedBefore: 1_500, late: true }), interval: 'yearly' });
    expect(late.lines.find((item) => item.metricName)).toMatchObject({ quantity: 200, amount: 400 });
  });

  it('prices late usage on top of what the period already billed: the included quantity is given once', () => {
    // 900 of 1 000 free units billed before; 300 more: 100 are free, 200 billable.
    const late = usageLine({ component: api, quantity: 300, billedBefore: 900, period, late: true }, 1, 'usd');
    expect(late).toMatchObject({ quantity: 200, amount: 400, metricName: 'api_calls', period, description: 'API calls (api_calls): 300 more reported after the period was invoiced' });
    // Past the included quantity already: every late unit bills.
    expect(usageLine({ component: api, quantity: 50, billedBefore: 1_200, period, late: true }, 1, 'usd')).toMatchObject({ quantity: 50, amount: 100 });
    // Billing a period in two parts bills what billing it at once would.
    fc.assert(fc.property(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 5_000 }), (first, second) => {
      const once = usageLine({ component: api, quantity: first + second, period }, 1, 'usd').amount;
      const split = usageLine({ component: api, quantity: first, period }, 1, 'usd').amount + usageLine({ component: api, quantity: second, billedBefore: first, period }, 1, 'usd').amount;
      expect(split).toBe(once);
    }));
  });

  it('rejects negative or fractional quantities and usage', () => {
    expect(failure(() => pricePeriod({ plan: plan(), quantity: -1 }))).toMatchObject({ param: 'quantity' });
    expect(failure(() => pricePeriod({ plan: plan(), quantity: 1.5 }))).toMatchObject({ param: 'quantity' });
    expect(failure(() => pricePeriod({ plan: plan({ components }), usage: used(-3) }))).toMatchObject({ param: 'usage[api_calls].quantity' });
    expect(failure(() => pricePeriod({ plan: plan({ components }), usage: used(1.5) }))).toMatchObject({ param: 'usage[api_calls].quantity' });
  });
});

describe('coupons and rounding', () => {
  const percent = (value: number) => ({ id: 'coupon_x', name: 'Promo', type: 'percentage' as const, value, currency: null });

  it('rounds a percentage discount half up on the subtotal', () => {
    expect(roundHalfUp(25, 2)).toBe(13);
    expect(roundHalfUp(24, 2)).toBe(12);
    // 15 % of 2 900 = 435; 12.5 % of 1 001 = 125.125 → 125; 50 % of 25 = 12.5 → 13
    expect(pricePeriod({ plan: plan(), coupon: percent(15) })).toMatchObject({ subtotal: 2_900, discount: 435, total: 2_465 });
    expect(pricePeriod({ plan: plan({ amountMonthly: 1_001 }), coupon: percent(12.5) }).discount).toBe(125);
    expect(pricePeriod({ plan: plan({ amountMonthly: 25 }), coupon: percent(50) }).discount).toBe(13);
  });

  it('takes a percentage once from the subtotal, not line by line', () => {
    // Two lines of 25 at 50 %: once on the subtotal 50 → 25; per line 12.5 → 13 twice → 26.
    const fixed = { id: 'pc_fee', type: 'fixed' as const, name: 'Fee', metricName: null, unitAmount: 25, includedQuantity: 0 };
    const price = pricePeriod({ plan: plan({ amountMonthly: 25, components: [fixed] }), coupon: percent(50) });
    expect(price.lines.map((item) => item.amount)).toEqual([25, 25]);
    expect(price).toMatchObject({ subtotal: 50, discount: 25, total: 25 });
  });

  it('a fixed amount never takes the total below zero and must share the currency', () => {
    const fixed = { id: 'coupon_f', name: 'Off', type: 'fixed_amount' as const, value: 5_000, currency: 'usd' };
    expect(pricePeriod({ plan: plan(), coupon: fixed })).toMatchObject({ discount: 2_900, total: 0 });
    expect(failure(() => pricePeriod({ plan: plan(), coupon: { ...fixed, currency: 'eur' } }))).toMatchObject({ code: 'coupon_currency_mismatch' });
  });
});

describe('checkTiers', () => {
  it('accepts an ordered set ending open-ended', () => {
    expect(checkTiers([{ upTo: 10, unitAmount: 500, flatAmount: 0 }, { upTo: null, unitAmount: 400, flatAmount: 0 }])).toHaveLength(2);
    expect(checkTiers([{ upTo: null, unitAmount: 0, flatAmount: 0 }])).toHaveLength(1);
  });

  it.each([
    [[], 'tiers'],
    [[{ upTo: 10, unitAmount: 1, flatAmount: 0 }], 'tiers[0].up_to'],
    [[{ upTo: null, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }], 'tiers[0].up_to'],
    [[{ upTo: 10, unitAmount: 1, flatAmount: 0 }, { upTo: 10, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }], 'tiers[1].up_to'],
    [[{ upTo: 0, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }], 'tiers[0].up_to'],
    [[{ upTo: 5, unitAmount: -1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }], 'tiers[0].unit_amount'],
    [[{ upTo: 5, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0.5 }], 'tiers[1].flat_amount'],
  ])('rejects %j at %s', (tiers, param) => {
    expect(failure(() => checkTiers(tiers as Tier[]))).toMatchObject({ code: 'parameter_invalid', param });
  });
});

describe('properties', () => {
  const amount = fc.integer({ min: 0, max: 100_000 });
  const tiersArb = fc
    .array(fc.record({ width: fc.integer({ min: 1, max: 1_000 }), unitAmount: amount, flatAmount: amount }), { minLength: 0, maxLength: 6 })
    .chain((bounded) =>
      fc.record({ unitAmount: amount, flatAmount: amount }).map((last) => {
        let upTo = 0;
        const tiers: Tier[] = bounded.map(({ width, unitAmount, flatAmount }) => ({ upTo: (upTo += width), unitAmount, flatAmount }));
        return [...tiers, { upTo: null, ...last }];
      }),
    );
  const quantity = fc.integer({ min: 0, max: 10_000 });
  const model = fc.constantFrom('flat_rate', 'per_unit', 'package', 'graduated', 'volume' as const);
  const coupon = fc.option(
    fc.oneof(
      fc.record({ id: fc.constant('coupon_p'), name: fc.constant('P'), type: fc.constant('percentage' as const), value: fc.integer({ min: 1, max: 10_000 }).map((bp) => bp / 100), currency: fc.constant(null) }),
      fc.record({ id: fc.constant('coupon_f'), name: fc.constant('F'), type: fc.constant('fixed_amount' as const), value: fc.integer({ min: 0, max: 10_000_000 }), currency: fc.constant('usd') }),
    ),
    { nil: null },
  );

  it('graduated totals equal the sum of the tier slices', () => {
    fc.assert(
      fc.property(tiersArb, quantity, (tiers, units) => {
        let expected = 0;
        let start = 0;
        for (const tier of tiers) {
          const end = tier.upTo === null ? units : Math.min(units, tier.upTo);
          if (end > start) expected += (end - start) * tier.unitAmount + tier.flatAmount;
          if (tier.upTo === null || units <= tier.upTo) break;
          start = tier.upTo;
        }
        const price = pricePeriod({ plan: plan({ pricingModel: 'graduated', amountMonthly: 0, tiers }), quantity: units });
        expect(price.total).toBe(expected);
        expect(graduatedLines(tiers, units, 1, 'usd').reduce((sum, item) => sum + item.quantity, 0)).toBe(units);
      }),
    );
  });

  it('volume uses the single tier the quantity falls in', () => {
    fc.assert(
      fc.property(tiersArb, fc.integer({ min: 1, max: 10_000 }), (tiers, units) => {
        const lines = volumeLines(tiers, units, 1, 'usd');
        expect(lines).toHaveLength(1);
        const tier = tiers[lines[0].tier!];
        const previousBound = lines[0].tier! === 0 ? 0 : tiers[lines[0].tier! - 1].upTo!;
        expect(units).toBeGreaterThan(previousBound);
        if (tier.upTo !== null) expect(units).toBeLessThanOrEqual(tier.upTo);
        expect(lines[0].amount).toBe(units * tier.unitAmount + tier.flatAmount);
      }),
    );
  });

  it('a 100 % coupon gives 0', () => {
    fc.assert(
      fc.property(model, amount, tiersArb, quantity, (pricingModel, amountMonthly, tiers, units) => {
        const tiered = pricingModel === 'graduated' || pricingModel === 'volume';
        const price = pricePeriod({
          plan: plan({ pricingModel, amountMonthly, tiers: tiered ? tiers : [], packageSize: 7 }),
          quantity: units,
          coupon: { id: 'coupon_all', name: 'All', type: 'percentage', value: 100, currency: null },
        });
        expect(price.total).toBe(0);
        expect(price.discount).toBe(price.subtotal);
      }),
    );
  });

  it('totals are integers, never negative, and the lines add up', () => {
    fc.assert(
      fc.property(
        model, amount, tiersArb, quantity, coupon, fc.constantFrom('monthly', 'quarterly', 'yearly' as const), fc.integer({ min: 0, max: 1_000_000 }),
        (pricingModel, amountMonthly, tiers, units, discount, interval, used) => {
          const tiered = pricingModel === 'graduated' || pricingModel === 'volume';
          const price = pricePeriod({
            plan: plan({
              pricingModel, amountMonthly, tiers: tiered ? tiers : [], packageSize: 3,
              components: [{ id: 'pc_m', type: 'metered', name: 'M', metricName: 'm', unitAmount: 3, includedQuantity: 10 }],
            }),
            quantity: units, coupon: discount, interval,
            usage: [{ component: { id: 'pc_m', type: 'metered', name: 'M', metricName: 'm', unitAmount: 3, includedQuantity: 10 }, quantity: used, period: { start: 0, end: 1 } }],
          });
          for (const value of [price.subtotal, price.discount, price.total, ...price.lines.map((item) => item.amount)]) {
            expect(Number.isSafeInteger(value)).toBe(true);
            expect(value).toBeGreaterThanOrEqual(0);
          }
          expect(price.subtotal).toBe(price.lines.reduce((sum, item) => sum + item.amount, 0));
          expect(price.total).toBe(price.subtotal - price.discount);
          expect(price.discount).toBeLessThanOrEqual(price.subtotal);
        },
      ),
    );
  });
});

describe('rounding happens once, on the subtotal', () => {
  const half = { id: 'coupon_half', name: 'Half', type: 'percentage' as const, value: 50, currency: null };
  const fixedFees = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ id: `pc_${index}`, type: 'fixed' as const, name: `Fee ${index}`, metricName: null, unitAmount: 1, includedQuantity: 0 }));

  it('takes 50 % of a 3-unit subtotal as 2, where rounding each 1-unit line would take 3', () => {
    // Three lines of 1: per line 0.5 → 1 three times = 3; on the subtotal 1.5 → 2.
    const price = pricePeriod({ plan: plan({ amountMonthly: 1, components: fixedFees(2) }), coupon: half });
    expect(price.lines.map((item) => item.amount)).toEqual([1, 1, 1]);
    expect(price).toMatchObject({ subtotal: 3, discount: 2, total: 1 });
  });

  it('equals the half-up rounding of the exact discount on the subtotal, for any plan (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 1, max: 10_000 }), (base, fees, basisPoints) => {
        const price = pricePeriod({ plan: plan({ amountMonthly: base, components: fixedFees(fees) }), coupon: { ...half, value: basisPoints / 100 } });
        expect(price.discount).toBe(Math.min(price.subtotal, roundHalfUp(price.subtotal * basisPoints, 10_000)));
      }),
    );
  });

  it('is exact for subtotals whose product with the percentage passes 2^53', () => {
    // 999 999 999 999 × 12 months × 749 seats = 8 987 999 999 991 012; 12.5 % of it is
    // 1 123 499 999 998 876.5 → …877. In doubles (subtotal × 1 250 ≈ 1.1e19) it came out …876.
    const price = pricePeriod({ plan: plan({ pricingModel: 'per_unit', amountMonthly: 999_999_999_999 }), quantity: 749, interval: 'yearly', coupon: { ...half, value: 12.5 } });
    expect(price.subtotal).toBe(8_987_999_999_991_012);
    expect(price.discount).toBe(1_123_499_999_998_877);
  });
});

describe('currencies', () => {
  it('prices in the plan currency, which must be an ISO 4217 code', () => {
    expect(pricePeriod({ plan: plan({ currency: 'jpy', amountMonthly: 500 }) })).toMatchObject({ currency: 'jpy', total: 500 });
    expect(failure(() => pricePeriod({ plan: plan({ currency: 'xyz' }) }))).toMatchObject({ code: 'parameter_invalid', param: 'currency' });
  });

  it('refuses a period whose amounts leave the exact range', () => {
    expect(failure(() => pricePeriod({ plan: plan({ pricingModel: 'per_unit', amountMonthly: 999_999_999_999 }), quantity: 1_000_000, interval: 'yearly' }))).toMatchObject({ code: 'amount_too_large' });
  });
});

describe('lines as an invoice shows them', () => {
  const components = [
    { id: 'pc_fixed', type: 'fixed' as const, name: 'Support', metricName: null, unitAmount: 990, includedQuantity: 0 },
    { id: 'pc_api', type: 'metered' as const, name: 'API calls', metricName: 'api_calls', unitAmount: 2, includedQuantity: 1_000 },
  ];

  it('names each plan, tier and component line and keeps its references', () => {
    const graduated = pricePeriod({ plan: plan({ pricingModel: 'graduated', amountMonthly: 100, tiers: TIERS, components }), quantity: 60, usage: [{ component: components[1], quantity: 1_200, period: { start: 100, end: 200 } }] });
    expect(graduated.lines).toStrictEqual([
      { kind: 'plan', description: 'Pro', quantity: 1, unitAmount: 100, flatAmount: 0, amount: 100 },
      { kind: 'tier', description: 'Tier 1 (1–10)', quantity: 10, unitAmount: 500, flatAmount: 0, amount: 5_000, tier: 0 },
      { kind: 'tier', description: 'Tier 2 (11–50)', quantity: 40, unitAmount: 400, flatAmount: 1_000, amount: 17_000, tier: 1 },
      { kind: 'tier', description: 'Tier 3 (51–∞)', quantity: 10, unitAmount: 300, flatAmount: 0, amount: 3_000, tier: 2 },
      { kind: 'component', description: 'Support', quantity: 1, unitAmount: 990, flatAmount: 0, amount: 990, componentId: 'pc_fixed' },
      { kind: 'component', description: 'API calls (api_calls): 1200 used, 1000 included', quantity: 200, unitAmount: 2, flatAmount: 0, amount: 400, componentId: 'pc_api', metricName: 'api_calls', period: { start: 100, end: 200 } },
    ]);
    expect(pricePeriod({ plan: plan(), quantity: 3 }).lines).toStrictEqual([
      { kind: 'plan', description: 'Pro', quantity: 1, unitAmount: 2_900, flatAmount: 0, amount: 2_900 },
    ]);
    expect(pricePeriod({ plan: plan({ pricingModel: 'per_unit' }), quantity: 3 }).lines).toStrictEqual([
      { kind: 'plan', description: 'Pro', quantity: 3, unitAmount: 2_900, flatAmount: 0, amount: 8_700 },
    ]);
    expect(pricePeriod({ plan: plan({ pricingModel: 'package', packageSize: 100 }), quantity: 101 }).lines).toStrictEqual([
      { kind: 'plan', description: 'Pro (2 × 100 units)', quantity: 2, unitAmount: 2_900, flatAmount: 0, amount: 5_800 },
    ]);
  });

  it('volume: a quantity on a bound belongs to that tier; none prices nothing, not even a flat amount', () => {
    const volume = plan({ pricingModel: 'volume', amountMonthly: 0, tiers: [{ upTo: 10, unitAmount: 500, flatAmount: 700 }, { upTo: null, unitAmount: 400, flatAmount: 0 }] });
    expect(pricePeriod({ plan: volume, quantity: 10 }).lines).toStrictEqual([
      { kind: 'tier', description: 'Tier 1 (up to 10)', quantity: 10, unitAmount: 500, flatAmount: 700, amount: 5_700, tier: 0 },
    ]);
    expect(pricePeriod({ plan: volume, quantity: 11 }).lines[0].description).toBe('Tier 2 (up to ∞)');
    expect(pricePeriod({ plan: volume, quantity: 0 })).toMatchObject({ lines: [], total: 0 });
  });
});

describe('inputs the engine refuses', () => {
  const percent = (value: number) => ({ id: 'coupon_x', name: 'Promo', type: 'percentage' as const, value, currency: null });

  it('a percentage outside (0, 100]', () => {
    for (const value of [0, -5, 100.01, Number.NaN]) expect(failure(() => pricePeriod({ plan: plan(), coupon: percent(value) }))).toMatchObject({ code: 'parameter_invalid', param: 'coupon' });
    expect(pricePeriod({ plan: plan(), coupon: percent(0.01) }).discount).toBe(0); // 0.29 → 0
  });

  it('an unknown interval or pricing model, and tiers on a model without tiers', () => {
    expect(failure(() => pricePeriod({ plan: plan(), interval: 'weekly' as never }))).toMatchObject({ code: 'parameter_invalid', param: 'interval' });
    expect(failure(() => pricePeriod({ plan: plan({ pricingModel: 'tiered' as never }) }))).toMatchObject({ code: 'parameter_invalid', param: 'pricing_model' });
    expect(failure(() => pricePeriod({ plan: plan({ tiers: TIERS }) }))).toMatchObject({ code: 'plan_not_tiered' });
  });

  it('tier sets: at most 50 tiers, integer bounds from 1', () => {
    const bounded = (count: number): Tier[] => [...Array.from({ length: count - 1 }, (_, index) => ({ upTo: index + 1, unitAmount: 1, flatAmount: 0 })), { upTo: null, unitAmount: 1, flatAmount: 0 }];
    expect(checkTiers(bounded(50))).toHaveLength(50);
    expect(failure(() => checkTiers(bounded(51)))).toMatchObject({ param: 'tiers' });
    expect(checkTiers([{ upTo: 1, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }])).toHaveLength(2);
    expect(failure(() => checkTiers([{ upTo: 1.5, unitAmount: 1, flatAmount: 0 }, { upTo: null, unitAmount: 1, flatAmount: 0 }]))).toMatchObject({ param: 'tiers[0].up_to' });
  });
});
