import { DomainError } from '@recur/kernel';
import { assertAttachable, createAddon, putOnSale, takeOffSale } from '../src/addons/addon';
import { createCoupon, updateCoupon } from '../src/coupons/coupon';
import { createPromotionCode, updatePromotionCode } from '../src/coupons/promotion-code';
import { archivePlan, clonePlan, createPlan, replaceTiers, restorePlan, updatePlan } from '../src/plans/plan';
import { createPriceComponent, updatePriceComponent } from '../src/plans/price-component';
import { thrownBy } from '@recur/testing';

const tenant = { accountId: 'acct_1', livemode: false };
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-02T00:00:00Z');

const failure = (fn: () => unknown) => thrownBy<DomainError>(fn);

describe('plan rules', () => {
  const plan = createPlan(tenant, { name: ' Team ', pricingModel: 'graduated', amountMonthly: 0 }, t0);

  it('creates an active plan with defaults', () => {
    expect(plan).toMatchObject({ name: 'Team', currency: 'usd', packageSize: 1, status: 'active', billingIntervals: ['monthly', 'quarterly', 'yearly'], archivedAt: null });
    expect(plan.id).toMatch(/^plan_/);
    expect(createPlan(tenant, { name: 'P', pricingModel: 'flat_rate', amountMonthly: 1, billingIntervals: ['yearly', 'monthly'] }, t0).billingIntervals).toEqual(['monthly', 'yearly']);
  });

  it('lets an archived plan change only name, description and metadata', () => {
    const archived = archivePlan(plan, t1);
    expect(archived).toMatchObject({ status: 'archived', archivedAt: t1 });
    expect(updatePlan(archived, { name: 'Old', metadata: { a: '1' } }, t1)).toMatchObject({ name: 'Old', metadata: { a: '1' } });
    for (const fields of [{ amountMonthly: 1 }, { pricingModel: 'volume' }, { currency: 'eur' }, { billingIntervals: ['monthly'] }]) {
      expect(failure(() => updatePlan(archived, fields, t1))).toMatchObject({ kind: 'failed_precondition', code: 'plan_archived' });
    }
    expect(failure(() => replaceTiers(archived, [{ upTo: null, unitAmount: 1, flatAmount: 0 }]))).toMatchObject({ code: 'plan_archived' });
    expect(failure(() => createPriceComponent(archived, { type: 'fixed', name: 'F', unitAmount: 1 }, t1))).toMatchObject({ code: 'plan_archived' });
    expect(failure(() => archivePlan(archived, t1))).toMatchObject({ code: 'plan_archived' });
    expect(restorePlan(archived, t1)).toMatchObject({ status: 'active', archivedAt: null });
    expect(failure(() => restorePlan(plan, t1))).toMatchObject({ code: 'plan_not_archived' });
  });

  it('clones as a new active plan', () => {
    const copy = clonePlan(archivePlan(plan, t1), undefined, t1);
    expect(copy).toMatchObject({ name: 'Team (copy)', status: 'active', archivedAt: null, createdAt: t1 });
    expect(copy.id).not.toBe(plan.id);
  });

  it('takes tiers only on tiered models, and package sizes only on the package model', () => {
    const flat = createPlan(tenant, { name: 'F', pricingModel: 'flat_rate', amountMonthly: 1 }, t0);
    expect(failure(() => replaceTiers(flat, [{ upTo: null, unitAmount: 1, flatAmount: 0 }]))).toMatchObject({ code: 'plan_not_tiered' });
    expect(failure(() => createPlan(tenant, { name: 'F', pricingModel: 'flat_rate', amountMonthly: 1, packageSize: 3 }, t0))).toMatchObject({ param: 'package_size' });
    const packaged = createPlan(tenant, { name: 'P', pricingModel: 'package', amountMonthly: 1, packageSize: 3 }, t0);
    expect(updatePlan(packaged, { pricingModel: 'per_unit' }, t1).packageSize).toBe(1);
  });

  it('keeps a component type fixed and its shape consistent', () => {
    const metered = createPriceComponent(plan, { type: 'metered', name: 'Calls', metricName: 'calls', unitAmount: 2 }, t0);
    expect(failure(() => updatePriceComponent(plan, metered, { type: 'fixed' }, t1))).toMatchObject({ param: 'type' });
    expect(failure(() => createPriceComponent(plan, { type: 'metered', name: 'Calls', metricName: 'Calls!', unitAmount: 2 }, t0))).toMatchObject({ param: 'metric_name' });
    expect(failure(() => createPriceComponent(plan, { type: 'fixed', name: 'Fee', unitAmount: 2, includedQuantity: 5 }, t0))).toMatchObject({ param: 'included_quantity' });
  });

  it('takes a plan-level usage_limit on a metered component only: a positive integer, null removes it', () => {
    const metered = createPriceComponent(plan, { type: 'metered', name: 'Calls', metricName: 'calls', unitAmount: 2, usageLimit: 500 }, t0);
    expect(metered.usageLimit).toBe(500);
    expect(createPriceComponent(plan, { type: 'metered', name: 'Calls', metricName: 'calls', unitAmount: 2 }, t0).usageLimit).toBeNull();
    expect(updatePriceComponent(plan, metered, { name: 'API calls' }, t1).usageLimit).toBe(500);
    expect(updatePriceComponent(plan, metered, { usageLimit: null }, t1).usageLimit).toBeNull();
    for (const usageLimit of [0, -1, 1.5, 1e16]) {
      expect(failure(() => createPriceComponent(plan, { type: 'metered', name: 'Calls', metricName: 'calls', unitAmount: 2, usageLimit }, t0))).toMatchObject({ param: 'usage_limit' });
    }
    expect(failure(() => createPriceComponent(plan, { type: 'fixed', name: 'Fee', unitAmount: 2, usageLimit: 10 }, t0))).toMatchObject({ param: 'usage_limit' });
  });
});

describe('add-on rules', () => {
  it('goes off sale and back, and refuses attaching while off sale', () => {
    const addon = createAddon(tenant, { name: 'Seat', priceMonthly: 500 }, t0);
    const off = takeOffSale(addon, t1);
    expect(failure(() => assertAttachable(off))).toMatchObject({ code: 'addon_off_sale' });
    expect(failure(() => takeOffSale(off, t1))).toMatchObject({ code: 'addon_off_sale' });
    expect(putOnSale(off, t1).status).toBe('on_sale');
    expect(failure(() => putOnSale(addon, t1))).toMatchObject({ code: 'addon_on_sale' });
  });
});

describe('coupon rules', () => {
  it('freezes the terms of a redeemed coupon', () => {
    const coupon = { ...createCoupon(tenant, { name: 'C', type: 'percentage', value: 10, duration: 'once' }, t0), timesRedeemed: 1 };
    expect(updateCoupon(coupon, { name: 'Renamed', metadata: { a: 'b' } }, t1)).toMatchObject({ name: 'Renamed', metadata: { a: 'b' } });
    for (const fields of [{ value: 20 }, { type: 'fixed_amount' }, { duration: 'forever' }, { durationInPeriods: 2 }, { currency: 'usd' }]) {
      expect(failure(() => updateCoupon(coupon, fields, t1))).toMatchObject({ kind: 'failed_precondition', code: 'coupon_redeemed' });
    }
  });

  it('accepts percentages in (0, 100] with two decimals', () => {
    expect(createCoupon(tenant, { name: 'C', type: 'percentage', value: 100, duration: 'forever' }, t0).value).toBe(100);
    expect(createCoupon(tenant, { name: 'C', type: 'percentage', value: 0.01, duration: 'forever' }, t0).value).toBe(0.01);
    expect(createCoupon(tenant, { name: 'C', type: 'percentage', value: 0.07, duration: 'forever' }, t0).value).toBe(0.07);
    for (const value of [0, -1, 100.01, 33.333]) {
      expect(failure(() => createCoupon(tenant, { name: 'C', type: 'percentage', value, duration: 'forever' }, t0))).toMatchObject({ param: 'value' });
    }
  });
});

describe('promotion code rules', () => {
  it('checks limits against the clock and times redeemed', () => {
    const code = createPromotionCode(tenant, 'coupon_1', { code: 'SPRING', expiresAt: t0.getTime() / 1000 + 60 }, t0);
    expect(code).toMatchObject({ active: true, timesRedeemed: 0, maxRedemptions: null });
    expect(failure(() => createPromotionCode(tenant, 'coupon_1', { code: 'SPRING', expiresAt: t0.getTime() / 1000 }, t0))).toMatchObject({ param: 'expires_at' });
    expect(failure(() => updatePromotionCode({ ...code, timesRedeemed: 5 }, { maxRedemptions: 4 }, t1))).toMatchObject({ param: 'max_redemptions' });
    expect(updatePromotionCode(code, { maxRedemptions: null, expiresAt: null, active: false }, t1)).toMatchObject({ maxRedemptions: null, expiresAt: null, active: false });
  });
});
