import * as grpc from '@grpc/grpc-js';
import { create, toBinary } from '@bufbuild/protobuf';
import { catalogV1, createServiceClient, ERROR_CODE_TRAILER, ERROR_PARAM_TRAILER, type ServiceClient } from '@recur/contracts';
import { type AppProcess, createTestDatabase, freePort, startApp } from '@recur/testing';

/**
 * The catalog service as its own process, on a real PostgreSQL database,
 * exercised through its gRPC surface only.
 */
const tenant = { accountId: 'acct_catalog', livemode: false };
const otherTenants = [{ accountId: tenant.accountId, livemode: true }, { accountId: 'acct_other', livemode: false }];
let app: AppProcess;
let catalogAddress: string;
let client: ServiceClient<typeof catalogV1.CatalogService>;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('catalog');
  const grpcPort = await freePort();
  app = await startApp('catalog', {
    env: { DATABASE_URL: databaseUrl, GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort), METRICS_PORT: '0', KAFKA_BROKERS: '' },
    ready: { grpcPort },
  });
  catalogAddress = `127.0.0.1:${grpcPort}`;
  client = createServiceClient(catalogV1.CatalogService, catalogAddress);
}, 90_000);

afterAll(async () => {
  client?.close();
  await app?.kill('SIGTERM');
});

async function grpcFailure(call: Promise<unknown>): Promise<{ code: grpc.status; errorCode?: string; param?: string }> {
  try {
    await call;
  } catch (error) {
    const serviceError = error as grpc.ServiceError;
    return {
      code: serviceError.code,
      errorCode: serviceError.metadata.get(ERROR_CODE_TRAILER)[0]?.toString(),
      param: serviceError.metadata.get(ERROR_PARAM_TRAILER)[0]?.toString(),
    };
  }
  throw new Error('expected the call to fail');
}

interface PlanFields {
  name?: string;
  description?: string;
  pricingModel?: string;
  amountMonthly?: bigint;
  currency?: string;
  packageSize?: number;
  billingIntervals?: string[];
  metadata?: Record<string, string>;
}

const newPlan = async (fields: PlanFields = {}) =>
  (await client.createPlan({ tenant, name: 'Pro', pricingModel: 'flat_rate', amountMonthly: 2_900n, ...fields })).plan!;

const tiers = [
  { upTo: 10n, unitAmount: 500n, flatAmount: 0n },
  { upTo: undefined, unitAmount: 400n, flatAmount: 0n },
];

describe('CatalogService plans', () => {
  it('creates with defaults and retrieves a plan', async () => {
    const plan = await newPlan({ description: 'For teams', metadata: { crm: '1' } });
    expect(plan).toMatchObject({ name: 'Pro', pricingModel: 'flat_rate', amountMonthly: 2_900n, currency: 'usd', packageSize: 1, status: 'active', livemode: false });
    expect(plan.price).toMatchObject({ amountMinor: 2_900n, currency: 'usd' });
    expect(plan.billingIntervals).toEqual(['monthly', 'quarterly', 'yearly']);
    expect(plan.id).toMatch(/^plan_/);
    expect((await client.getPlan({ tenant, id: plan.id })).plan).toEqual(plan);
  });

  it('accepts every pricing model and rejects unknown values with the param', async () => {
    for (const pricingModel of ['flat_rate', 'per_unit', 'package', 'graduated', 'volume']) {
      expect((await newPlan({ pricingModel, packageSize: pricingModel === 'package' ? 10 : undefined })).pricingModel).toBe(pricingModel);
    }
    const before = (await client.listPlans({ tenant, page: { limit: 1 } })).page!.total;
    const cases: [PlanFields, string][] = [
      [{ pricingModel: 'tiered' }, 'pricing_model'],
      [{ amountMonthly: -1n }, 'amount_monthly'],
      [{ currency: 'USD' }, 'currency'],
      [{ currency: 'xyz' }, 'currency'], // the shape of a code, but not in ISO 4217
      [{ currency: 'xau' }, 'currency'], // ISO 4217, but gold has no minor unit
      [{ amountMonthly: 2n ** 53n }, 'amount_monthly'], // beyond a number's exact range: refused, not rounded
      [{ name: ' ' }, 'name'],
      [{ billingIntervals: ['monthly', 'weekly'] }, 'billing_intervals[1]'],
      [{ packageSize: 5 }, 'package_size'],
    ];
    for (const [fields, param] of cases) {
      expect(await grpcFailure(newPlan(fields))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'parameter_invalid', param });
    }
    expect((await client.listPlans({ tenant, page: { limit: 1 } })).page!.total).toBe(before);
  });

  it('answers a repeated request id with the first plan, even concurrently', async () => {
    const requestId = `req_plan_${Date.now()}`;
    const results = await Promise.all(Array.from({ length: 5 }, () => client.createPlan({ tenant, name: 'Once', pricingModel: 'per_unit', amountMonthly: 100n, requestId })));
    expect(new Set(results.map((result) => result.plan!.id)).size).toBe(1);
  });

  it('archives and restores; an archived plan stays readable, listable by status, and refuses pricing edits', async () => {
    const plan = await newPlan({ pricingModel: 'graduated', amountMonthly: 0n });
    await client.replacePlanTiers({ tenant, id: plan.id, tiers });
    const { plan: archived } = await client.archivePlan({ tenant, id: plan.id });
    expect(archived).toMatchObject({ status: 'archived' });
    expect(archived!.archivedAt).toBeDefined();
    expect((await client.getPlan({ tenant, id: plan.id })).plan!.status).toBe('archived');
    expect((await client.listPlans({ tenant, page: { limit: 100 }, status: 'archived' })).plans.map((p) => p.id)).toContain(plan.id);
    expect((await client.listPlans({ tenant, page: { limit: 100 }, status: 'active' })).plans.map((p) => p.id)).not.toContain(plan.id);
    expect(await grpcFailure(client.listPlans({ tenant, page: { limit: 10 }, status: 'deleted' }))).toMatchObject({ param: 'status' });

    expect((await client.updatePlan({ tenant, id: plan.id, name: 'Legacy', metadata: { note: 'old' } })).plan).toMatchObject({ name: 'Legacy', metadata: { note: 'old' } });
    const conflict = { code: grpc.status.FAILED_PRECONDITION, errorCode: 'plan_archived' };
    expect(await grpcFailure(client.updatePlan({ tenant, id: plan.id, amountMonthly: 1n }))).toMatchObject(conflict);
    expect(await grpcFailure(client.replacePlanTiers({ tenant, id: plan.id, tiers }))).toMatchObject(conflict);
    expect(await grpcFailure(client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name: 'Fee', unitAmount: 1n }))).toMatchObject(conflict);
    expect(await grpcFailure(client.archivePlan({ tenant, id: plan.id }))).toMatchObject(conflict);

    const { plan: restored } = await client.restorePlan({ tenant, id: plan.id });
    expect(restored!.status).toBe('active');
    expect(restored!.archivedAt).toBeUndefined();
    expect(await grpcFailure(client.restorePlan({ tenant, id: plan.id }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'plan_not_archived' });
    expect((await client.updatePlan({ tenant, id: plan.id, amountMonthly: 500n })).plan!.amountMonthly).toBe(500n);
  });

  it('replaces tiers atomically; an invalid set changes nothing', async () => {
    const plan = await newPlan({ pricingModel: 'volume', amountMonthly: 0n });
    expect((await client.getPlanTiers({ tenant, id: plan.id })).tiers).toEqual([]);
    expect((await client.replacePlanTiers({ tenant, id: plan.id, tiers })).tiers).toHaveLength(2);
    const invalid = [
      [{ upTo: 10n, unitAmount: 500n, flatAmount: 0n }, { upTo: 5n, unitAmount: 1n, flatAmount: 0n }, { unitAmount: 1n, flatAmount: 0n }],
      [{ upTo: 10n, unitAmount: 500n, flatAmount: 0n }, { upTo: 20n, unitAmount: 1n, flatAmount: 0n }],
      [{ upTo: 10n, unitAmount: -5n, flatAmount: 0n }, { unitAmount: 1n, flatAmount: 0n }],
      [{ upTo: 10n, unitAmount: 5n, flatAmount: 0n }, { unitAmount: 1n, flatAmount: 2n ** 60n }],
    ];
    const params = [];
    for (const set of invalid) params.push((await grpcFailure(client.replacePlanTiers({ tenant, id: plan.id, tiers: set }))).param);
    expect(params).toEqual(['tiers[1].up_to', 'tiers[1].up_to', 'tiers[0].unit_amount', 'tiers[1].flat_amount']);
    const stored = (await client.getPlanTiers({ tenant, id: plan.id })).tiers;
    expect(stored.map((tier) => [tier.upTo, tier.unitAmount])).toEqual([[10n, 500n], [undefined, 400n]]);

    const flat = await newPlan();
    expect(await grpcFailure(client.replacePlanTiers({ tenant, id: flat.id, tiers }))).toMatchObject({ errorCode: 'plan_not_tiered' });
  });

  it('adds, updates, lists and deletes price components', async () => {
    const plan = await newPlan();
    const { priceComponent: metered } = await client.createPriceComponent({ tenant, planId: plan.id, type: 'metered', name: 'API calls', metricName: 'api_calls', unitAmount: 2n, includedQuantity: 1000n });
    expect(metered).toMatchObject({ planId: plan.id, type: 'metered', metricName: 'api_calls', unitAmount: 2n, includedQuantity: 1000n });
    expect(metered!.id).toMatch(/^pc_/);
    const { priceComponent: fixed } = await client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name: 'Support', unitAmount: 990n });
    expect(await grpcFailure(client.createPriceComponent({ tenant, planId: plan.id, type: 'metered', name: 'x', unitAmount: 1n }))).toMatchObject({ param: 'metric_name' });
    expect(await grpcFailure(client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name: 'x', unitAmount: 1n, metricName: 'a' }))).toMatchObject({ param: 'metric_name' });
    expect(await grpcFailure(client.createPriceComponent({ tenant, planId: plan.id, type: 'usage', name: 'x', unitAmount: 1n }))).toMatchObject({ param: 'type' });

    expect((await client.updatePriceComponent({ tenant, planId: plan.id, id: metered!.id, unitAmount: 3n })).priceComponent!.unitAmount).toBe(3n);
    const listed = await client.listPriceComponents({ tenant, planId: plan.id, page: { limit: 10 } });
    expect(listed.priceComponents.map((c) => c.id)).toEqual([metered!.id, fixed!.id]);
    expect(listed.page).toMatchObject({ total: 2, hasMore: false });

    await client.deletePriceComponent({ tenant, planId: plan.id, id: fixed!.id });
    expect(await grpcFailure(client.deletePriceComponent({ tenant, planId: plan.id, id: fixed!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    const other = await newPlan();
    expect(await grpcFailure(client.updatePriceComponent({ tenant, planId: other.id, id: metered!.id, name: 'x' }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('clones a plan with its tiers and price components into a new active plan', async () => {
    const plan = await newPlan({ pricingModel: 'graduated', amountMonthly: 100n, metadata: { a: '1' } });
    await client.replacePlanTiers({ tenant, id: plan.id, tiers });
    await client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name: 'Support', unitAmount: 990n });
    await client.archivePlan({ tenant, id: plan.id });
    const { plan: copy } = await client.clonePlan({ tenant, id: plan.id, requestId: `req_clone_${Date.now()}` });
    expect(copy).toMatchObject({ name: 'Pro (copy)', status: 'active', pricingModel: 'graduated', amountMonthly: 100n, metadata: { a: '1' } });
    expect(copy!.id).not.toBe(plan.id);
    expect((await client.getPlanTiers({ tenant, id: copy!.id })).tiers).toEqual((await client.getPlanTiers({ tenant, id: plan.id })).tiers);
    const components = (await client.listPriceComponents({ tenant, planId: copy!.id, page: { limit: 10 } })).priceComponents;
    expect(components.map((c) => [c.name, c.unitAmount, c.planId])).toEqual([['Support', 990n, copy!.id]]);
    expect((await client.clonePlan({ tenant, id: plan.id, name: 'Named' })).plan!.name).toBe('Named');
  });

  it('answers a plan with its tiers and all its price components in one call, as the three calls read them', async () => {
    const plan = await newPlan({ pricingModel: 'graduated', amountMonthly: 100n });
    await client.replacePlanTiers({ tenant, id: plan.id, tiers });
    for (const name of ['Support', 'Training', 'Backups']) await client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name, unitAmount: 990n });
    const sellable = await client.getSellablePlan({ tenant, id: plan.id });
    expect(sellable.plan).toEqual((await client.getPlan({ tenant, id: plan.id })).plan);
    expect(sellable.tiers).toEqual((await client.getPlanTiers({ tenant, id: plan.id })).tiers);
    expect(sellable.priceComponents).toEqual((await client.listPriceComponents({ tenant, planId: plan.id, page: { limit: 10 } })).priceComponents);
    expect(sellable.priceComponents.map((component) => component.name)).toEqual(['Support', 'Training', 'Backups']);
    const bare = await newPlan();
    expect(await client.getSellablePlan({ tenant, id: bare.id })).toMatchObject({ plan: { id: bare.id }, tiers: [], priceComponents: [] });
    expect(await grpcFailure(client.getSellablePlan({ tenant, id: 'plan_missing' }))).toMatchObject({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing' });
  });

  it('keeps tenants apart: another app or account sees nothing', async () => {
    const plan = await newPlan();
    for (const other of otherTenants) {
      expect(await grpcFailure(client.getPlan({ tenant: other, id: plan.id }))).toMatchObject({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing', param: 'id' });
      expect(await grpcFailure(client.getPlanTiers({ tenant: other, id: plan.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.getSellablePlan({ tenant: other, id: plan.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.updatePlan({ tenant: other, id: plan.id, name: 'x' }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.archivePlan({ tenant: other, id: plan.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.clonePlan({ tenant: other, id: plan.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.listPriceComponents({ tenant: other, planId: plan.id, page: { limit: 1 } }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect((await client.listPlans({ tenant: other, page: { limit: 100 } })).plans.map((p) => p.id)).not.toContain(plan.id);
    }
    expect(await grpcFailure(client.getPlan({ id: plan.id }))).toMatchObject({ errorCode: 'tenant_missing' });
  });
});

describe('CatalogService add-ons', () => {
  it('creates, updates, takes off sale and restores', async () => {
    const { addon } = await client.createAddon({ tenant, name: 'Extra seat', priceMonthly: 500n, currency: 'eur' });
    expect(addon).toMatchObject({ name: 'Extra seat', priceMonthly: 500n, currency: 'eur', status: 'on_sale', price: { amountMinor: 500n, currency: 'eur' } });
    expect((await client.createAddon({ tenant, name: 'Yen seat', priceMonthly: 500n, currency: 'jpy' })).addon!.price).toMatchObject({ amountMinor: 500n, currency: 'jpy' });
    expect(addon!.id).toMatch(/^addon_/);
    const { addon: off } = await client.takeAddonOffSale({ tenant, id: addon!.id });
    expect(off!.status).toBe('off_sale');
    expect((await client.getAddon({ tenant, id: addon!.id })).addon!.status).toBe('off_sale');
    expect(await grpcFailure(client.takeAddonOffSale({ tenant, id: addon!.id }))).toMatchObject({ errorCode: 'addon_off_sale' });
    expect((await client.updateAddon({ tenant, id: addon!.id, priceMonthly: 600n })).addon!.priceMonthly).toBe(600n);
    expect((await client.listAddons({ tenant, page: { limit: 100 }, status: 'off_sale' })).addons.map((a) => a.id)).toContain(addon!.id);
    expect((await client.restoreAddon({ tenant, id: addon!.id })).addon!.status).toBe('on_sale');
    expect(await grpcFailure(client.restoreAddon({ tenant, id: addon!.id }))).toMatchObject({ errorCode: 'addon_on_sale' });
    expect(await grpcFailure(client.createAddon({ tenant, name: 'x', priceMonthly: -1n }))).toMatchObject({ param: 'price_monthly' });
    for (const other of otherTenants) expect(await grpcFailure(client.getAddon({ tenant: other, id: addon!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});

describe('CatalogService coupons and promotion codes', () => {
  it('validates coupon terms with the offending param', async () => {
    const base = { tenant, name: 'Launch', type: 'percentage', value: 20, duration: 'once' };
    const { coupon } = await client.createCoupon(base);
    expect(coupon).toMatchObject({ type: 'percentage', value: 20, duration: 'once', timesRedeemed: 0 });
    expect(coupon!.currency).toBeUndefined();
    expect(coupon!.id).toMatch(/^coupon_/);
    expect((await client.createCoupon({ ...base, value: 12.5, duration: 'repeating', durationInPeriods: 3 })).coupon).toMatchObject({ value: 12.5, durationInPeriods: 3 });
    expect((await client.createCoupon({ ...base, type: 'fixed_amount', value: 1000, currency: 'usd', duration: 'forever' })).coupon).toMatchObject({ currency: 'usd', amountOff: { amountMinor: 1_000n, currency: 'usd' } });
    expect(coupon!.amountOff).toBeUndefined();
    const cases: [Record<string, unknown>, string][] = [
      [{ value: 0 }, 'value'],
      [{ value: 100.5 }, 'value'],
      [{ value: 10.123 }, 'value'],
      [{ type: 'bogus' }, 'type'],
      [{ duration: 'sometimes' }, 'duration'],
      [{ duration: 'repeating' }, 'duration_in_periods'],
      [{ durationInPeriods: 2 }, 'duration_in_periods'],
      [{ currency: 'usd' }, 'currency'],
      [{ type: 'fixed_amount', value: 100 }, 'currency'],
      [{ type: 'fixed_amount', value: 1.5, currency: 'usd' }, 'value'],
      [{ type: 'fixed_amount', value: 100, currency: 'abc' }, 'currency'],
    ];
    for (const [fields, param] of cases) {
      expect({ fields, ...(await grpcFailure(client.createCoupon({ ...base, ...fields }))) }).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param });
    }
  });

  it('updates a coupon, deletes it with its promotion codes', async () => {
    const { coupon } = await client.createCoupon({ tenant, name: 'Spring', type: 'percentage', value: 10, duration: 'once' });
    expect((await client.updateCoupon({ tenant, id: coupon!.id, type: 'fixed_amount', value: 500, currency: 'usd' })).coupon).toMatchObject({ type: 'fixed_amount', value: 500, currency: 'usd' });
    const { coupon: percentage } = await client.updateCoupon({ tenant, id: coupon!.id, type: 'percentage', value: 15 });
    expect(percentage).toMatchObject({ type: 'percentage', value: 15 });
    expect(percentage!.currency).toBeUndefined();
    const { promotionCode } = await client.createPromotionCode({ tenant, code: 'SPRING15', couponId: coupon!.id });
    const { coupon: deleted } = await client.deleteCoupon({ tenant, id: coupon!.id });
    expect(deleted!.deletedAt).toBeDefined();
    expect(await grpcFailure(client.updateCoupon({ tenant, id: coupon!.id, name: 'x' }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await grpcFailure(client.getPromotionCode({ tenant, id: promotionCode!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect((await client.listCoupons({ tenant, page: { limit: 100 } })).coupons.map((c) => c.id)).not.toContain(coupon!.id);
  });

  it('keeps promotion codes unique per app ignoring case, tied to a coupon of the same app', async () => {
    const { coupon } = await client.createCoupon({ tenant, name: 'Summer', type: 'percentage', value: 100, duration: 'forever' });
    const expiresAt = BigInt(Math.floor(Date.now() / 1000) + 3600);
    const { promotionCode } = await client.createPromotionCode({ tenant, code: 'Summer26', couponId: coupon!.id, maxRedemptions: 5, expiresAt });
    expect(promotionCode).toMatchObject({ code: 'Summer26', couponId: coupon!.id, active: true, maxRedemptions: 5, expiresAt, timesRedeemed: 0 });
    expect(promotionCode!.id).toMatch(/^promo_/);
    expect(await grpcFailure(client.createPromotionCode({ tenant, code: 'SUMMER26', couponId: coupon!.id }))).toEqual({ code: grpc.status.ALREADY_EXISTS, errorCode: 'promotion_code_exists', param: 'code' });
    // A coupon of another app is not visible here...
    expect(await grpcFailure(client.createPromotionCode({ tenant: otherTenants[0], code: 'SUMMER26', couponId: coupon!.id }))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'coupon' });
    // ...but the same text is free there with that app's own coupon, and taken again in it.
    const { coupon: otherCoupon } = await client.createCoupon({ tenant: otherTenants[0], name: 'Summer', type: 'percentage', value: 10, duration: 'once' });
    const { promotionCode: otherCode } = await client.createPromotionCode({ tenant: otherTenants[0], code: 'summer26', couponId: otherCoupon!.id });
    expect(otherCode).toMatchObject({ code: 'summer26', couponId: otherCoupon!.id });
    expect(await grpcFailure(client.createPromotionCode({ tenant: otherTenants[0], code: 'SUMMER26', couponId: otherCoupon!.id }))).toEqual({ code: grpc.status.ALREADY_EXISTS, errorCode: 'promotion_code_exists', param: 'code' });
    expect(await grpcFailure(client.createPromotionCode({ tenant, code: 'summer26', couponId: coupon!.id }))).toEqual({ code: grpc.status.ALREADY_EXISTS, errorCode: 'promotion_code_exists', param: 'code' });
    expect(await grpcFailure(client.createPromotionCode({ tenant, code: 'no spaces', couponId: coupon!.id }))).toMatchObject({ param: 'code' });
    expect(await grpcFailure(client.createPromotionCode({ tenant, code: 'PAST', couponId: coupon!.id, expiresAt: 1000n }))).toMatchObject({ param: 'expires_at' });

    const { promotionCode: updated } = await client.updatePromotionCode({ tenant, id: promotionCode!.id, active: false, clearMaxRedemptions: true, clearExpiresAt: true });
    expect(updated!.active).toBe(false);
    expect(updated!.maxRedemptions).toBeUndefined();
    expect(updated!.expiresAt).toBeUndefined();
    expect(await grpcFailure(client.updatePromotionCode({ tenant, id: promotionCode!.id, maxRedemptions: 0 }))).toMatchObject({ param: 'max_redemptions' });
    expect((await client.listPromotionCodes({ tenant, page: { limit: 10 }, code: 'summer26' })).promotionCodes.map((c) => c.id)).toEqual([promotionCode!.id]);

    await client.deletePromotionCode({ tenant, id: promotionCode!.id });
    expect(await grpcFailure(client.deletePromotionCode({ tenant, id: promotionCode!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    // A deleted code frees its text.
    expect((await client.createPromotionCode({ tenant, code: 'summer26', couponId: coupon!.id })).promotionCode!.code).toBe('summer26');
  });

  it('redeems a code exactly up to max_redemptions under concurrency, once per request id, and refuses with clear codes', async () => {
    const { coupon } = await client.createCoupon({ tenant, name: 'Five off', type: 'fixed_amount', value: 500, currency: 'usd', duration: 'once' });
    const now = BigInt(Math.floor(Date.now() / 1000));
    await client.createPromotionCode({ tenant, code: 'THREEONLY', couponId: coupon!.id, maxRedemptions: 3, expiresAt: now + 3600n });
    const redeem = (requestId: string, extra: { code?: string; redeemedAt?: bigint; currency?: string; tenant?: typeof tenant } = {}) =>
      client.redeemPromotionCode({ tenant, code: 'threeonly', redeemedAt: now, requestId, ...extra });
    // A repeated request id counts once, even concurrently.
    const [first, again] = await Promise.all([redeem('redeem:a'), redeem('redeem:a')]);
    expect(again).toEqual(first);
    expect(first.promotionCode).toMatchObject({ code: 'THREEONLY', timesRedeemed: 1 });
    // Eight racing redemptions for two places left: exactly two succeed.
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => redeem(`redeem:race-${index}`)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2);
    const refused = await Promise.all(outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => grpcFailure(Promise.reject((outcome as PromiseRejectedResult).reason))));
    expect(new Set(refused.map((failure) => JSON.stringify(failure)))).toEqual(new Set([JSON.stringify({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'promotion_code_exhausted', param: 'promotion_code' })]));
    expect((await client.getCoupon({ tenant, id: coupon!.id })).coupon!.timesRedeemed).toBe(3);
    // A redeemed coupon's terms are frozen (redemptions are counted by subscriptions).
    expect(await grpcFailure(client.updateCoupon({ tenant, id: coupon!.id, value: 100 }))).toMatchObject({ errorCode: 'coupon_redeemed' });

    await client.createPromotionCode({ tenant, code: 'OFFNOW', couponId: coupon!.id, active: false });
    await client.createPromotionCode({ tenant, code: 'SOONGONE', couponId: coupon!.id, expiresAt: now + 60n });
    await client.createPromotionCode({ tenant, code: 'DOLLARS', couponId: coupon!.id });
    const refusal = (param: string) => (errorCode: string) => ({ code: grpc.status.INVALID_ARGUMENT, errorCode, param });
    expect(await grpcFailure(redeem('redeem:x1', { code: 'OFFNOW' }))).toEqual(refusal('promotion_code')('promotion_code_inactive'));
    // Expiry is judged at the redeemer's time (a test clock's, say), not the catalog's.
    expect(await grpcFailure(redeem('redeem:x2', { code: 'SOONGONE', redeemedAt: now + 60n }))).toEqual(refusal('promotion_code')('promotion_code_expired'));
    expect(await grpcFailure(redeem('redeem:x3', { code: 'DOLLARS', currency: 'eur' }))).toEqual(refusal('promotion_code')('coupon_currency_mismatch'));
    expect(await grpcFailure(redeem('redeem:x4', { code: 'NOSUCH' }))).toEqual(refusal('promotion_code')('resource_missing'));
    expect(await grpcFailure(redeem('redeem:x5', { code: 'DOLLARS', tenant: otherTenants[1] }))).toEqual(refusal('promotion_code')('resource_missing'));
    // Refusals counted nothing.
    expect((await client.listPromotionCodes({ tenant, page: { limit: 10 }, code: 'DOLLARS' })).promotionCodes[0].timesRedeemed).toBe(0);
    expect((await client.getCoupon({ tenant, id: coupon!.id })).coupon!.timesRedeemed).toBe(3);
  });
});

describe('CatalogService repeated commands', () => {
  const requestId = (name: string) => `req_${name}_${Date.now()}_${Math.random().toString(36).slice(2)}`;

  it('answers a repeated archive, tier replacement or component delete with the first answer', async () => {
    const plan = await newPlan({ pricingModel: 'graduated', amountMonthly: 0n });
    const archive = { tenant, id: plan.id, requestId: requestId('archive') };
    const archived = await client.archivePlan(archive);
    // Without the request id a second archive is refused; with it, the first answer comes back.
    expect(await grpcFailure(client.archivePlan({ tenant, id: plan.id }))).toMatchObject({ errorCode: 'plan_archived' });
    expect(await client.archivePlan(archive)).toEqual(archived);
    await client.restorePlan({ tenant, id: plan.id });
    // A refusal is an answer too: repeated after the state changed, it is still the first refusal and changes nothing.
    const restore = { tenant, id: plan.id, requestId: requestId('restore') };
    expect(await grpcFailure(client.restorePlan(restore))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'plan_not_archived', param: undefined });
    await client.archivePlan({ tenant, id: plan.id });
    expect(await grpcFailure(client.restorePlan(restore))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'plan_not_archived', param: undefined });
    expect((await client.getPlan({ tenant, id: plan.id })).plan!.status).toBe('archived');
    await client.restorePlan({ tenant, id: plan.id });

    const replace = { tenant, id: plan.id, tiers, requestId: requestId('tiers') };
    const replaced = await client.replacePlanTiers(replace);
    await client.replacePlanTiers({ tenant, id: plan.id, tiers: [{ upTo: undefined, unitAmount: 1n, flatAmount: 0n }] });
    expect(await client.replacePlanTiers(replace)).toEqual(replaced);
    expect((await client.getPlanTiers({ tenant, id: plan.id })).tiers).toHaveLength(1);

    const { priceComponent } = await client.createPriceComponent({ tenant, planId: plan.id, type: 'fixed', name: 'Support', unitAmount: 1_000n });
    const remove = { tenant, planId: plan.id, id: priceComponent!.id, requestId: requestId('component') };
    const removed = await client.deletePriceComponent(remove);
    expect(await Promise.all([client.deletePriceComponent(remove), client.deletePriceComponent(remove)])).toEqual([removed, removed]);
  });

  it('answers a repeated coupon delete or promotion-code update with the first answer', async () => {
    const { coupon } = await client.createCoupon({ tenant, name: 'Once', type: 'percentage', value: 5, duration: 'once' });
    const remove = { tenant, id: coupon!.id, requestId: requestId('coupon') };
    const deleted = await client.deleteCoupon(remove);
    expect(await client.deleteCoupon(remove)).toEqual(deleted);
    expect(await grpcFailure(client.deleteCoupon({ tenant, id: coupon!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });


    const { coupon: other } = await client.createCoupon({ tenant, name: 'Codes', type: 'percentage', value: 5, duration: 'once' });
    const { promotionCode } = await client.createPromotionCode({ tenant, code: `RETRY${Date.now()}`, couponId: other!.id });
    const update = { tenant, id: promotionCode!.id, active: false, requestId: requestId('code') };
    const updated = await client.updatePromotionCode(update);
    await client.updatePromotionCode({ tenant, id: promotionCode!.id, active: true });
    expect(await client.updatePromotionCode(update)).toEqual(updated);
  });

  it('answers a repeated add-on change with the first answer', async () => {
    const { addon } = await client.createAddon({ tenant, name: 'Seats', priceMonthly: 500n });
    const offSale = { tenant, id: addon!.id, requestId: requestId('addon') };
    const first = await client.takeAddonOffSale(offSale);
    expect(await client.takeAddonOffSale(offSale)).toEqual(first);
    expect(await grpcFailure(client.takeAddonOffSale({ tenant, id: addon!.id }))).toMatchObject({ errorCode: 'addon_off_sale' });
  });
});

describe('a request from a newer caller', () => {
  /** Calls CreatePlan with `extra` bytes after the encoded request: fields of a schema one release ahead. */
  async function createPlanWithExtraBytes(extra: number[]): Promise<grpc.ServiceError | undefined> {
    const raw = new grpc.Client(catalogAddress, grpc.credentials.createInsecure());
    try {
      const request = toBinary(catalogV1.CreatePlanRequestSchema, create(catalogV1.CreatePlanRequestSchema, { tenant, name: 'From the future', pricingModel: 'flat_rate', amountMonthly: 900n }));
      return await new Promise((resolve) => {
        raw.makeUnaryRequest('/recur.catalog.v1.CatalogService/CreatePlan', (bytes: Buffer) => bytes, (bytes: Buffer) => bytes, Buffer.concat([Buffer.from(request), Buffer.from(extra)]), (error) => resolve(error ?? undefined));
      });
    } finally {
      raw.close();
    }
  }
  const planNames = async () => (await client.listPlans({ tenant, page: { limit: 100 } })).plans.map((plan) => plan.name);

  it('is refused, and nothing done, when it sets a field this release does not know — at the top or inside a message', async () => {
    // Field 999, varint 1: the tag is 999 << 3 = 0xB8 0x3E.
    const topLevel = await createPlanWithExtraBytes([0xb8, 0x3e, 0x01]);
    // Field 1 (tenant) again, holding only field 999: protobuf merges it into the tenant.
    const nested = await createPlanWithExtraBytes([0x0a, 0x03, 0xb8, 0x3e, 0x01]);
    for (const refusal of [topLevel, nested]) {
      expect({ code: refusal?.code, errorCode: refusal?.metadata.get(ERROR_CODE_TRAILER)[0]?.toString() }).toEqual({ code: grpc.status.UNAVAILABLE, errorCode: 'service_unavailable' });
    }
    expect(topLevel?.details).toMatch(/field 999 of recur\.catalog\.v1\.CreatePlanRequest/);
    expect(nested?.details).toMatch(/field 999 of recur\.common\.v1\.Tenant \(at tenant\)/);
    expect(await planNames()).not.toContain('From the future');
    // The same request without the unknown field is served.
    expect(await createPlanWithExtraBytes([])).toBeUndefined();
    expect(await planNames()).toContain('From the future');
  });
});
