import { ApiError } from '../src/http/api-error';
import { createValidationPipe } from '../src/http/validation';
import { CreateCouponDto, UpdateCouponDto } from '../src/coupons/coupons.dto';
import { CreatePlanDto, CreatePriceComponentDto, UpdatePlanDto } from '../src/plans/plans.dto';
import { CreateSalesLinkDto } from '../src/sales-links/sales-links.dto';
import { ChangeBillingIntervalDto, CreateSubscriptionDto } from '../src/subscriptions/subscriptions.dto';

/**
 * The catalog's value sets (pricing models, billing intervals, price component and coupon types,
 * coupon durations) are the services' to check (the catalog's, and the subscription service's for
 * a subscription's or a sales link's interval): the gateway's door passes any string on, so a
 * catalog release that adds a value needs no gateway release, and the catalog's INVALID_ARGUMENT
 * is the documented 400 (tests/mesh/test/catalog.mesh.spec.ts). What is not a string is still
 * refused at the door, with its param.
 */
const pipe = createValidationPipe();
const validate = (body: object, metatype: new () => object) => pipe.transform(body, { type: 'body', metatype });
const refusal = async (body: object, metatype: new () => object) => {
  const error = await validate(body, metatype).then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(ApiError);
  const { status, code, param } = error as ApiError;
  return { status, code, param };
};

const PLAN = { name: 'Plan', amount_monthly: 100 };
const COUPON = { name: 'Coupon', value: 10 };

describe("the gateway's door, on the catalog's value sets", () => {
  it.each([
    ['a plan', CreatePlanDto, { ...PLAN, pricing_model: 'stairstep', billing_intervals: ['weekly', 'monthly'] }],
    ['a plan change', UpdatePlanDto, { pricing_model: 'stairstep', billing_intervals: ['fortnightly'] }],
    ['a price component', CreatePriceComponentDto, { type: 'seat_based', name: 'Seats', unit_amount: 5 }],
    ['a coupon', CreateCouponDto, { ...COUPON, type: 'free_trial_days', duration: 'twice' }],
    ['a coupon change', UpdateCouponDto, { type: 'free_trial_days', duration: 'twice' }],
    // The subscription service checks a subscription's interval against the plan it sells.
    ['a subscription', CreateSubscriptionDto, { customer: 'cus_1', plan: 'plan_1', billing_interval: 'weekly' }],
    ['an interval change', ChangeBillingIntervalDto, { billing_interval: 'weekly' }],
    ['a sales link', CreateSalesLinkDto, { kind: 'plan', title: 'Pro', plan_id: 'plan_1', billing_interval: 'weekly' }],
  ])('passes on values a newer catalog may accept, in %s', async (_what, metatype, body) => {
    expect(JSON.parse(JSON.stringify(await validate(body, metatype)))).toEqual(body);
  });

  it.each([
    ['pricing_model', CreatePlanDto, { ...PLAN, pricing_model: 7 }],
    ['billing_intervals', CreatePlanDto, { ...PLAN, pricing_model: 'flat_rate', billing_intervals: ['monthly', 3] }],
    ['billing_intervals', CreatePlanDto, { ...PLAN, pricing_model: 'flat_rate', billing_intervals: [] }],
    ['type', CreatePriceComponentDto, { type: null, name: 'Seats', unit_amount: 5 }],
    ['duration', CreateCouponDto, { ...COUPON, type: 'percentage', duration: ['once'] }],
  ] as const)('still refuses a %s that is not a string (or an empty list)', async (param, metatype, body) => {
    expect(await refusal(body, metatype)).toEqual({ status: 400, code: 'parameter_invalid', param });
  });

  it('still requires them', async () => {
    expect(await refusal(PLAN, CreatePlanDto)).toEqual({ status: 400, code: 'parameter_missing', param: 'pricing_model' });
    expect(await refusal({ ...COUPON, type: 'percentage' }, CreateCouponDto)).toEqual({ status: 400, code: 'parameter_missing', param: 'duration' });
  });
});
