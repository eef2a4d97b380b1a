import type { ResourceDocs } from '../openapi/route-doc';
import { CreatePromotionCodeDto, ListPromotionCodesQueryDto, UpdatePromotionCodeDto } from './promotion-codes.dto';

export const promotionCodesDocs: ResourceDocs = {
  routes: {
    'GET /v1/promotion-codes': { query: ListPromotionCodesQueryDto, response: 'PromotionCode', list: true },
    'POST /v1/promotion-codes': { body: CreatePromotionCodeDto, response: 'PromotionCode', status: 201 },
    'PATCH /v1/promotion-codes/:id': { body: UpdatePromotionCodeDto, response: 'PromotionCode' },
    'DELETE /v1/promotion-codes/:id': { response: 'PromotionCode' },
  },
  schemas: {
    PromotionCode: {
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
    },
  },
};
