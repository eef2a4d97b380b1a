import { create } from '@bufbuild/protobuf';
import { AddonSchema } from '../src/gen/recur/catalog/v1/addon_pb';
import { PlanSchema } from '../src/gen/recur/catalog/v1/plan_pb';
import { MoneySchema } from '../src/gen/recur/common/v1/money_pb';
import { presentAddon, presentPlan } from '../src';

/**
 * The gateway's presenters of the catalog's answers read `price` (a Money) when the catalog sends
 * it, and otherwise the deprecated amount and currency every catalog release fills: a catalog
 * built before `price` (or one that stops sending it) still reads as the same plan or add-on.
 */
const PLAN = { id: 'plan_1', name: 'Pro', pricingModel: 'flat_rate', packageSize: 1, billingIntervals: ['monthly'], status: 'active', created: 1n, updated: 1n };
const ADDON = { id: 'addon_1', name: 'Seats', status: 'on_sale', created: 1n, updated: 1n };

describe('catalog presenters against an older catalog', () => {
  it('present a plan without `price` from its deprecated amount and currency', () => {
    const plan = create(PlanSchema, { ...PLAN, amountMonthly: 2_500n, currency: 'eur' });
    expect(presentPlan(plan)).toMatchObject({ amount_monthly: 2_500, currency: 'eur' });
  });

  it('present an add-on without `price` from its deprecated amount and currency', () => {
    const addon = create(AddonSchema, { ...ADDON, priceMonthly: 300n, currency: 'usd' });
    expect(presentAddon(addon)).toMatchObject({ price_monthly: 300, currency: 'usd' });
  });

  it('read `price` when the catalog sends it', () => {
    const price = create(MoneySchema, { amountMinor: 4_000n, currency: 'gbp' });
    expect(presentPlan(create(PlanSchema, { ...PLAN, price, amountMonthly: 1n, currency: 'gbp' }))).toMatchObject({ amount_monthly: 4_000, currency: 'gbp' });
    expect(presentAddon(create(AddonSchema, { ...ADDON, price, priceMonthly: 1n, currency: 'gbp' }))).toMatchObject({ price_monthly: 4_000, currency: 'gbp' });
  });
});
