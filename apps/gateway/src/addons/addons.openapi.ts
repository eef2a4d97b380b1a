import { ADDON_STATUSES } from '@recur/contracts';
import type { ResourceDocs } from '../openapi/route-doc';
import { CreateAddonDto, ListAddonsQueryDto, UpdateAddonDto } from './addons.dto';

export const addonsDocs: ResourceDocs = {
  routes: {
    'GET /v1/addons': { query: ListAddonsQueryDto, response: 'Addon', list: true },
    'GET /v1/addons/:id': { response: 'Addon' },
    'POST /v1/addons': { body: CreateAddonDto, response: 'Addon', status: 201 },
    'PATCH /v1/addons/:id': { body: UpdateAddonDto, response: 'Addon' },
    'DELETE /v1/addons/:id': { response: 'Addon' },
    'POST /v1/addons/:id/restore': { response: 'Addon' },
  },
  schemas: {
    Addon: {
      type: 'object',
      required: ['id', 'object', 'livemode', 'name', 'description', 'price_monthly', 'currency', 'status', 'on_sale', 'metadata', 'created', 'updated'],
      properties: {
        id: { type: 'string', example: 'addon_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
        object: { type: 'string', enum: ['addon'] },
        livemode: { type: 'boolean' },
        name: { type: 'string' },
        description: { type: ['string', 'null'] },
        price_monthly: { type: 'integer', minimum: 0, description: "Monthly price in the currency's minor unit." },
        currency: { type: 'string', example: 'usd' },
        status: { type: 'string', enum: [...ADDON_STATUSES], description: 'off_sale: readable, but cannot be newly attached to a subscription.' },
        on_sale: { type: 'boolean' },
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
        created: { type: 'integer', description: 'Unix seconds.' },
        updated: { type: 'integer', description: 'Unix seconds.' },
      },
    },
  },
};
