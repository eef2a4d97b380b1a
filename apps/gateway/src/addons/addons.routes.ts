import { type AddonJson, presentAddon } from '@recur/contracts';
import { ADDON_STATUSES } from '@recur/vocabulary';
import { toInt64 } from '@recur/money';
import { listEnvelope, pageRequest } from '../http/list';
import { requireActiveTaxRates } from '../tax-rates/require-tax-rates';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateAddonDto, ListAddonsQueryDto, UpdateAddonDto } from './addons.dto';

export const ADDON_SCHEMA = responseSchema<AddonJson>('Addon', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'name', 'description', 'price_monthly', 'currency', 'status', 'on_sale', 'metadata', 'created', 'updated', 'tax_rates'],
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
    tax_rates: { type: 'array', items: { type: 'string' }, description: 'The tax rates (`txr_…`) the add-on\'s invoice lines carry; empty when it names none (docs/api/tax-rates.md).' },
  },
});

/** `/v1/addons` → CatalogService. Rules live in the service. */
export const ADDON_ROUTES = defineRoutes('Add-ons', [
  listRoute({
    method: 'GET', path: '/v1/addons', summary: 'List add-ons', query: ListAddonsQueryDto, response: ADDON_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { addons, page } = await services.catalog.listAddons({ tenant, page: pageRequest(query), status: query.status });
      return listEnvelope('/v1/addons', addons.map(presentAddon), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/addons/:id', summary: 'Retrieve an add-on', response: ADDON_SCHEMA,
    handler: async ({ services, tenant, params }) => presentAddon((await services.catalog.getAddon({ tenant, id: params.id })).addon!),
  }),
  route({
    method: 'POST', path: '/v1/addons', summary: 'Create an add-on', body: CreateAddonDto, response: ADDON_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      await requireActiveTaxRates(services, tenant, body.tax_rates ?? []);
      const { addon } = await services.catalog.createAddon({
        tenant,
        name: body.name,
        description: body.description,
        priceMonthly: toInt64(body.price_monthly, 'price_monthly'),
        currency: body.currency ?? '',
        metadata: body.metadata ?? {},
        taxRateIds: body.tax_rates ?? [],
        requestId: commandId,
      });
      return presentAddon(addon!);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/addons/:id', summary: 'Update an add-on', body: UpdateAddonDto, response: ADDON_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      await requireActiveTaxRates(services, tenant, body.tax_rates ?? []);
      const { addon } = await services.catalog.updateAddon({
        tenant,
        id: params.id,
        name: body.name,
        description: body.description === null ? '' : body.description,
        priceMonthly: toInt64(body.price_monthly, 'price_monthly'),
        currency: body.currency,
        metadata: body.metadata ?? {},
        taxRateIds: body.tax_rates === undefined ? undefined : { ids: body.tax_rates },
        requestId: commandId,
      });
      return presentAddon(addon!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/addons/:id', summary: 'Take an add-on off sale', response: ADDON_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentAddon((await services.catalog.takeAddonOffSale({ tenant, id: params.id, requestId: commandId })).addon!),
  }),
  route({
    method: 'POST', path: '/v1/addons/:id/restore', summary: 'Put an add-on back on sale', response: ADDON_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentAddon((await services.catalog.restoreAddon({ tenant, id: params.id, requestId: commandId })).addon!),
  }),
]);
