import { type CouponJson, presentCoupon } from '@recur/contracts';
import { COUPON_DURATIONS } from '@recur/vocabulary';
import { COUPON_TYPES } from '@recur/pricing';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateCouponDto, ListCouponsQueryDto, UpdateCouponDto } from './coupons.dto';

export const COUPON_SCHEMA = responseSchema<CouponJson>('Coupon', {
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
});

/** `/v1/coupons` → CatalogService. Rules live in the service. */
export const COUPON_ROUTES = defineRoutes('Coupons and promotion codes', [
  listRoute({
    method: 'GET', path: '/v1/coupons', summary: 'List coupons', query: ListCouponsQueryDto, response: COUPON_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { coupons, page } = await services.catalog.listCoupons({ tenant, page: pageRequest(query) });
      return listEnvelope('/v1/coupons', coupons.map(presentCoupon), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/coupons', summary: 'Create a coupon', body: CreateCouponDto, response: COUPON_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { coupon } = await services.catalog.createCoupon({
        tenant,
        name: body.name,
        type: body.type,
        value: body.value,
        currency: body.currency,
        duration: body.duration,
        durationInPeriods: body.duration_in_periods,
        metadata: body.metadata ?? {},
        requestId: commandId,
      });
      return presentCoupon(coupon!);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/coupons/:id', summary: 'Update a coupon', body: UpdateCouponDto, response: COUPON_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { coupon } = await services.catalog.updateCoupon({
        tenant,
        id: params.id,
        name: body.name,
        type: body.type,
        value: body.value,
        currency: body.currency === null ? '' : body.currency,
        duration: body.duration,
        durationInPeriods: body.duration_in_periods === null ? 0 : body.duration_in_periods,
        metadata: body.metadata ?? {},
        requestId: commandId,
      });
      return presentCoupon(coupon!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/coupons/:id', summary: 'Delete a coupon', response: COUPON_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentCoupon((await services.catalog.deleteCoupon({ tenant, id: params.id, requestId: commandId })).coupon!),
  }),
]);
