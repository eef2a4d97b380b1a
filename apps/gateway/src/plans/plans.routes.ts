import { type PlanJson, type PlanTiersJson, type PriceComponentJson, presentPlan, presentPlanTiers, presentPriceComponent } from '@recur/contracts';
import { PLAN_STATUSES } from '@recur/vocabulary';
import { BILLING_INTERVALS, PRICE_COMPONENT_TYPES, PRICING_MODELS } from '@recur/pricing';
import { toInt64 } from '@recur/money';
import { listEnvelope, pageRequest } from '../http/list';
import { requireActiveTaxRates } from '../tax-rates/require-tax-rates';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import {
  ClonePlanDto, CreatePlanDto, CreatePriceComponentDto, ListPlansQueryDto, ListPriceComponentsQueryDto, ReplaceTiersDto, UpdatePlanDto, UpdatePriceComponentDto,
} from './plans.dto';

const unix = { type: 'integer', description: 'Unix seconds.' };
const minor = (description: string) => ({ type: 'integer', minimum: 0, description: `${description} In the currency's minor unit.` });

export const PLAN_SCHEMA = responseSchema<PlanJson>('Plan', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'name', 'description', 'pricing_model', 'amount_monthly', 'currency', 'package_size', 'billing_intervals', 'status', 'metadata', 'created', 'updated', 'archived_at', 'tax_rates'],
  properties: {
    id: { type: 'string', example: 'plan_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['plan'] },
    livemode: { type: 'boolean' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    pricing_model: {
      type: 'string',
      enum: [...PRICING_MODELS],
      description: 'flat_rate: amount_monthly per period; per_unit: × quantity; package: × ceil(quantity / package_size); graduated: base fee + each tier prices its slice; volume: base fee + the tier the quantity falls in prices every unit.',
    },
    amount_monthly: minor('The monthly base amount; a quarterly period costs 3×, a yearly one 12×.'),
    currency: { type: 'string', example: 'usd', description: 'Lowercase ISO 4217.' },
    package_size: { type: 'integer', minimum: 1 },
    billing_intervals: { type: 'array', items: { type: 'string', enum: [...BILLING_INTERVALS] } },
    status: { type: 'string', enum: [...PLAN_STATUSES], description: 'An archived plan stays readable but cannot be sold, and accepts only name, description and metadata changes.' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: unix,
    updated: unix,
    archived_at: { type: ['integer', 'null'], description: 'Unix seconds of archiving, or null.' },
    tax_rates: { type: 'array', items: { type: 'string' }, description: 'The tax rates (`txr_…`) the plan\'s invoice lines carry; empty when it names none (docs/api/tax-rates.md).' },
  },
});

export const PLAN_TIERS_SCHEMA = responseSchema<PlanTiersJson>('PlanTiers', {
  type: 'object',
  required: ['object', 'plan', 'tiers'],
  properties: {
    object: { type: 'string', enum: ['plan_tiers'] },
    plan: { type: 'string' },
    tiers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['up_to', 'unit_amount', 'flat_amount'],
        properties: {
          up_to: { type: ['integer', 'null'], description: 'Last unit of the tier (inclusive); null for the open-ended last tier.' },
          unit_amount: minor('Price per unit.'),
          flat_amount: minor('Charged once when the quantity reaches the tier.'),
        },
      },
    },
  },
});

export const PRICE_COMPONENT_SCHEMA = responseSchema<PriceComponentJson>('PriceComponent', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'plan', 'type', 'name', 'metric_name', 'unit_amount', 'included_quantity', 'usage_limit', 'created', 'updated'],
  properties: {
    id: { type: 'string', example: 'pc_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['price_component'] },
    livemode: { type: 'boolean' },
    plan: { type: 'string' },
    type: { type: 'string', enum: [...PRICE_COMPONENT_TYPES], description: 'metered: unit_amount per unit of metric_name beyond included_quantity; fixed: unit_amount per month.' },
    name: { type: 'string' },
    metric_name: { type: ['string', 'null'] },
    unit_amount: minor('Price per unit of usage, or the monthly fee.'),
    included_quantity: { type: 'integer', minimum: 0, description: 'Free usage per month (metered).' },
    usage_limit: { type: ['integer', 'null'], minimum: 1, description: "The plan's limit of the metric per period (metered): usage-metering alerts at 80 % and 100 % of it unless the subscription has its own limit; null for none." },
    created: unix,
    updated: unix,
  },
});

/** `/v1/plans` and their tiers and price components → CatalogService. Rules live in the service. */
export const PLAN_ROUTES = defineRoutes('Plans', [
  route({
    method: 'POST', path: '/v1/plans', summary: 'Create a plan', body: CreatePlanDto, response: PLAN_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      await requireActiveTaxRates(services, tenant, body.tax_rates ?? []);
      const { plan } = await services.catalog.createPlan({
        tenant,
        name: body.name,
        description: body.description,
        pricingModel: body.pricing_model,
        amountMonthly: toInt64(body.amount_monthly, 'amount_monthly'),
        currency: body.currency ?? '',
        packageSize: body.package_size,
        billingIntervals: body.billing_intervals ?? [],
        metadata: body.metadata ?? {},
        taxRateIds: body.tax_rates ?? [],
        requestId: commandId,
      });
      return presentPlan(plan!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/plans', summary: 'List plans', publishable: true, query: ListPlansQueryDto, response: PLAN_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { plans, page } = await services.catalog.listPlans({ tenant, page: pageRequest(query), status: query.status });
      return listEnvelope('/v1/plans', plans.map(presentPlan), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/plans/:id', summary: 'Retrieve a plan', publishable: true, response: PLAN_SCHEMA,
    handler: async ({ services, tenant, params }) => presentPlan((await services.catalog.getPlan({ tenant, id: params.id })).plan!),
  }),
  route({
    method: 'PATCH', path: '/v1/plans/:id', summary: 'Update a plan', body: UpdatePlanDto, response: PLAN_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      await requireActiveTaxRates(services, tenant, body.tax_rates ?? []);
      const { plan } = await services.catalog.updatePlan({
        tenant,
        id: params.id,
        name: body.name,
        description: body.description === null ? '' : body.description,
        pricingModel: body.pricing_model,
        amountMonthly: toInt64(body.amount_monthly, 'amount_monthly'),
        currency: body.currency,
        packageSize: body.package_size,
        billingIntervals: body.billing_intervals ?? [],
        metadata: body.metadata ?? {},
        taxRateIds: body.tax_rates === undefined ? undefined : { ids: body.tax_rates },
        requestId: commandId,
      });
      return presentPlan(plan!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/plans/:id', summary: 'Archive a plan', response: PLAN_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentPlan((await services.catalog.archivePlan({ tenant, id: params.id, requestId: commandId })).plan!),
  }),
  route({
    method: 'POST', path: '/v1/plans/:id/restore', summary: 'Restore an archived plan', response: PLAN_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => presentPlan((await services.catalog.restorePlan({ tenant, id: params.id, requestId: commandId })).plan!),
  }),
  route({
    method: 'POST', path: '/v1/plans/:id/clone', summary: 'Clone a plan', body: ClonePlanDto, response: PLAN_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, params, body }) =>
      presentPlan((await services.catalog.clonePlan({ tenant, id: params.id, name: body.name, requestId: commandId })).plan!),
  }),
  route({
    method: 'GET', path: '/v1/plans/:id/tiers', summary: "List a plan's tiers", publishable: true, response: PLAN_TIERS_SCHEMA,
    handler: async ({ services, tenant, params }) => presentPlanTiers(params.id, (await services.catalog.getPlanTiers({ tenant, id: params.id })).tiers),
  }),
  route({
    method: 'PUT', path: '/v1/plans/:id/tiers', summary: "Replace a plan's tiers", body: ReplaceTiersDto, response: PLAN_TIERS_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { tiers } = await services.catalog.replacePlanTiers({
        tenant,
        id: params.id,
        tiers: body.tiers.map((tier) => ({
          upTo: toInt64(tier.up_to ?? undefined, 'up_to'),
          unitAmount: toInt64(tier.unit_amount, 'unit_amount'),
          flatAmount: toInt64(tier.flat_amount ?? 0, 'flat_amount'),
        })),
        requestId: commandId,
      });
      return presentPlanTiers(params.id, tiers);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/plans/:id/price-components', summary: "List a plan's price components", publishable: true, query: ListPriceComponentsQueryDto, response: PRICE_COMPONENT_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      const { priceComponents, page } = await services.catalog.listPriceComponents({ tenant, planId: params.id, page: pageRequest(query) });
      return listEnvelope(`/v1/plans/${params.id}/price-components`, priceComponents.map(presentPriceComponent), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/plans/:id/price-components', summary: 'Add a price component', body: CreatePriceComponentDto, response: PRICE_COMPONENT_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { priceComponent } = await services.catalog.createPriceComponent({
        tenant,
        planId: params.id,
        type: body.type,
        name: body.name,
        metricName: body.metric_name,
        unitAmount: toInt64(body.unit_amount, 'unit_amount'),
        includedQuantity: toInt64(body.included_quantity, 'included_quantity'),
        usageLimit: toInt64(body.usage_limit, 'usage_limit'),
        requestId: commandId,
      });
      return presentPriceComponent(priceComponent!);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/plans/:id/price-components/:componentId', summary: 'Update a price component', body: UpdatePriceComponentDto, response: PRICE_COMPONENT_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { priceComponent } = await services.catalog.updatePriceComponent({
        tenant,
        planId: params.id,
        id: params.componentId,
        name: body.name,
        metricName: body.metric_name,
        unitAmount: toInt64(body.unit_amount, 'unit_amount'),
        includedQuantity: toInt64(body.included_quantity, 'included_quantity'),
        usageLimit: toInt64(body.usage_limit ?? undefined, 'usage_limit'),
        clearUsageLimit: body.usage_limit === null,
        requestId: commandId,
      });
      return presentPriceComponent(priceComponent!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/plans/:id/price-components/:componentId', summary: 'Delete a price component', response: PRICE_COMPONENT_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) =>
      presentPriceComponent((await services.catalog.deletePriceComponent({ tenant, planId: params.id, id: params.componentId, requestId: commandId })).priceComponent!),
  }),
]);
