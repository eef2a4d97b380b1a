import { COUPON_DURATIONS } from '@recur/contracts';
import { COUPON_TYPES } from '@recur/pricing';
import type { ResourceDocs } from '../openapi/route-doc';
import { CreateCouponDto, ListCouponsQueryDto, UpdateCouponDto } from './coupons.dto';

export const couponsDocs: ResourceDocs = {
  routes: {
    'GET /v1/coupons': { query: ListCouponsQueryDto, response: 'Coupon', list: true },
    'POST /v1/coupons': { body: CreateCouponDto, response: 'Coupon', status: 201 },
    'PATCH /v1/coupons/:id': { body: UpdateCouponDto, response: 'Coupon' },
    'DELETE /v1/coupons/:id': { response: 'Coupon' },
  },
  schemas: {
    Coupon: {
      type: 'object',
      required: ['id', 'object', 'livemode', 'name', 'type', 'value', 'currency', 'duration', 'duration_in_periods', 'times_redeemed', 'metadata', 'created', 'updated', 'deleted'],
      properties: {
        id: { type: 'string', example: 'coupon_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
        object: { type: 'string', enum: ['coupon'] },
        livemode: { type: 'boolean' },
        name: { type: 'string' },
        type: { type: 'string', enum: [...COUPON_TYPES] },
        value: { type: 'number', description: 'percentage: 0 < value ≤ 100 (two decimals at most); fixed_amount: amount off in minor units.' },
        currency: { type: ['string', 'null'], description: 'fixed_amount only.' },
        duration: { type: 'string', enum: [...COUPON_DURATIONS] },
        duration_in_periods: { type: ['integer', 'null'], description: 'repeating only: the number of billing periods.' },
        times_redeemed: { type: 'integer', description: 'Once above 0, only name and metadata may change.' },
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
        created: { type: 'integer', description: 'Unix seconds.' },
        updated: { type: 'integer', description: 'Unix seconds.' },
        deleted: { type: 'boolean', description: 'True only in the answer to DELETE.' },
      },
    },
  },
};
