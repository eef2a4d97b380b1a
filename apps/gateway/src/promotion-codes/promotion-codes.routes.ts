import { presentPromotionCode, type PromotionCodeJson } from '@recur/contracts';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreatePromotionCodeDto, ListPromotionCodesQueryDto, UpdatePromotionCodeDto } from './promotion-codes.dto';

export const PROMOTION_CODE_SCHEMA = responseSchema<PromotionCodeJson>('PromotionCode', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'code', 'coupon', 'active', 'max_redemptions', 'times_redeemed', 'expires_at', 'created', 'updated', 'deleted'],
  properties: {
    id: { type: 'string', example: 'promo_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['promotion_code'] },
    livemode: { type: 'boolean' },
    code: { type: 'string', description: 'Unique per app, ignoring case.' },
    coupon: { type: 'string', description: 'The coupon id.' },
    active: { type: 'boolean' },
    max_redemptions: { type: ['integer', 'null'] },
    times_redeemed: { type: 'integer' },
    expires_at: { type: ['integer', 'null'], description: 'Unix seconds, or null for never.' },
    created: { type: 'integer', description: 'Unix seconds.' },
    updated: { type: 'integer', description: 'Unix seconds.' },
    deleted: { type: 'boolean', description: 'True only in the answer to DELETE.' },
  },
});

/** `/v1/promotion-codes` → CatalogService. Rules live in the service. */
export const PROMOTION_CODE_ROUTES = defineRoutes('Coupons and promotion codes', [
  listRoute({
    method: 'GET', path: '/v1/promotion-codes', summary: 'List promotion codes', query: ListPromotionCodesQueryDto, response: PROMOTION_CODE_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { promotionCodes, page } = await services.catalog.listPromotionCodes({
        tenant, page: pageRequest(query), couponId: query.coupon, code: query.code,
      });
      return listEnvelope('/v1/promotion-codes', promotionCodes.map(presentPromotionCode), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/promotion-codes', summary: 'Create a promotion code', body: CreatePromotionCodeDto, response: PROMOTION_CODE_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { promotionCode } = await services.catalog.createPromotionCode({
        tenant,
        code: body.code,
        couponId: body.coupon,
        active: body.active,
        maxRedemptions: body.max_redemptions,
        expiresAt: body.expires_at === undefined ? undefined : BigInt(body.expires_at),
        requestId: commandId,
      });
      return presentPromotionCode(promotionCode!);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/promotion-codes/:id', summary: 'Update a promotion code', body: UpdatePromotionCodeDto, response: PROMOTION_CODE_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { promotionCode } = await services.catalog.updatePromotionCode({
        tenant,
        id: params.id,
        active: body.active,
        maxRedemptions: body.max_redemptions ?? undefined,
        clearMaxRedemptions: body.max_redemptions === null,
        expiresAt: body.expires_at === null || body.expires_at === undefined ? undefined : BigInt(body.expires_at),
        clearExpiresAt: body.expires_at === null,
        requestId: commandId,
      });
      return presentPromotionCode(promotionCode!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/promotion-codes/:id', summary: 'Delete a promotion code', response: PROMOTION_CODE_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) =>
      presentPromotionCode((await services.catalog.deletePromotionCode({ tenant, id: params.id, requestId: commandId })).promotionCode!),
  }),
]);
