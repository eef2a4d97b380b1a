import { presentTaxRate, type TaxRateJson } from '@recur/contracts';
import { parsePercentage } from '@recur/money';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateTaxRateDto, ListTaxRatesQueryDto, UpdateTaxRateDto } from './tax-rates.dto';

/** A tax amount on an invoice line, or summed per rate on the invoice (docs/api/invoices.md#tax-and-rounding). */
export const TAX_AMOUNT_SCHEMA = {
  type: 'object',
  required: ['tax_rate', 'display_name', 'percentage', 'inclusive', 'taxable_amount', 'amount'],
  properties: {
    tax_rate: { type: 'string', example: 'txr_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    display_name: { type: 'string', example: 'VAT' },
    percentage: { type: 'number', example: 16 },
    inclusive: { type: 'boolean' },
    taxable_amount: { type: 'integer', description: 'What the rate applied to, net of tax, in minor units.' },
    amount: { type: 'integer', description: 'The tax in minor units, rounded half up per line.' },
  },
} as const;

export const TAX_RATE_SCHEMA = responseSchema<TaxRateJson>('TaxRate', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'display_name', 'description', 'percentage', 'inclusive', 'country', 'region', 'active', 'account_default', 'metadata', 'created', 'updated'],
  properties: {
    id: { type: 'string', example: 'txr_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['tax_rate'] },
    livemode: { type: 'boolean' },
    display_name: { type: 'string', example: 'VAT' },
    description: { type: ['string', 'null'] },
    percentage: { type: 'number', minimum: 0, maximum: 100, example: 16, description: 'At most four decimals, kept exactly.' },
    inclusive: { type: 'boolean', description: 'true: prices contain the tax; false: it is added on top.' },
    country: { type: ['string', 'null'], example: 'ZM', description: 'ISO 3166-1 alpha-2.' },
    region: { type: ['string', 'null'] },
    active: { type: 'boolean', description: 'false once archived.' },
    account_default: { type: 'boolean', description: "The app's default rate." },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: { type: 'integer', description: 'Unix seconds.' },
    updated: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** `/v1/tax-rates` → InvoicingService (docs/api/tax-rates.md). Rules live in the service. */
export const TAX_RATE_ROUTES = defineRoutes('Tax rates', [
  listRoute({
    method: 'GET', path: '/v1/tax-rates', summary: 'List tax rates', query: ListTaxRatesQueryDto, response: TAX_RATE_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const active = query.active === undefined ? undefined : query.active === 'true';
      const { taxRates, page } = await services.invoicing.listTaxRates({ tenant, page: pageRequest(query), active });
      return listEnvelope('/v1/tax-rates', taxRates.map(presentTaxRate), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/tax-rates/:id', summary: 'Retrieve a tax rate', response: TAX_RATE_SCHEMA,
    handler: async ({ services, tenant, params }) => presentTaxRate((await services.invoicing.getTaxRate({ tenant, id: params.id })).taxRate!),
  }),
  route({
    method: 'POST', path: '/v1/tax-rates', summary: 'Create a tax rate', body: CreateTaxRateDto, response: TAX_RATE_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { taxRate } = await services.invoicing.createTaxRate({
        tenant,
        displayName: body.display_name,
        description: body.description,
        ratePpm: BigInt(parsePercentage(body.percentage)),
        inclusive: body.inclusive,
        country: body.country ?? '',
        region: body.region ?? '',
        accountDefault: body.account_default ?? false,
        metadata: body.metadata ?? {},
        requestId: commandId,
      });
      return presentTaxRate(taxRate!);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/tax-rates/:id', summary: 'Update or archive a tax rate', body: UpdateTaxRateDto, response: TAX_RATE_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { taxRate } = await services.invoicing.updateTaxRate({
        tenant,
        id: params.id,
        displayName: body.display_name,
        description: body.description === null ? '' : body.description,
        country: body.country,
        region: body.region,
        active: body.active,
        accountDefault: body.account_default,
        metadata: body.metadata ?? {},
        requestId: commandId,
      });
      return presentTaxRate(taxRate!);
    },
  }),
]);
