import { PLAN_STATUSES } from '@recur/contracts';
import { BILLING_INTERVALS, PRICE_COMPONENT_TYPES, PRICING_MODELS } from '@recur/pricing';
import type { ResourceDocs } from '../openapi/route-doc';
import {
  ClonePlanDto, CreatePlanDto, CreatePriceComponentDto, ListPlansQueryDto, ListPriceComponentsQueryDto, ReplaceTiersDto, UpdatePlanDto, UpdatePriceComponentDto,
} from './plans.dto';

const unix = { type: 'integer', description: 'Unix seconds.' };
const minor = (description: string) => ({ type: 'integer', minimum: 0, description: `${description} In the currency's minor unit.` });

export const plansDocs: ResourceDocs = {
  routes: {
    'POST /v1/plans': { body: CreatePlanDto, response: 'Plan', status: 201 },
    'GET /v1/plans': { query: ListPlansQueryDto, response: 'Plan', list: true },
    'GET /v1/plans/:id': { response: 'Plan' },
    'PATCH /v1/plans/:id': { body: UpdatePlanDto, response: 'Plan' },
    'DELETE /v1/plans/:id': { response: 'Plan' },
    'POST /v1/plans/:id/restore': { response: 'Plan' },
    'POST /v1/plans/:id/clone': { body: ClonePlanDto, response: 'Plan', status: 201 },
    'GET /v1/plans/:id/tiers': { response: 'PlanTiers' },
    'PUT /v1/plans/:id/tiers': { body: ReplaceTiersDto, response: 'PlanTiers' },
    'GET /v1/plans/:id/price-components': { query: ListPriceComponentsQueryDto, response: 'PriceComponent', list: true },
    'POST /v1/plans/:id/price-components': { body: CreatePriceComponentDto, response: 'PriceComponent', status: 201 },
    'PATCH /v1/plans/:id/price-components/:componentId': { body: UpdatePriceComponentDto, response: 'PriceComponent' },
    'DELETE /v1/plans/:id/price-components/:componentId': { response: 'PriceComponent' },
  },
  schemas: {
    Plan: {
      type: 'object',
      required: ['id', 'object', 'livemode', 'name', 'description', 'pricing_model', 'amount_monthly', 'currency', 'package_size', 'billing_intervals', 'status', 'metadata', 'created', 'updated', 'archived_at'],
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
      },
    },
    PlanTiers: {
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
    },
    PriceComponent: {
      type: 'object',
      required: ['id', 'object', 'livemode', 'plan', 'type', 'name', 'metric_name', 'unit_amount', 'included_quantity', 'created', 'updated'],
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
        created: unix,
        updated: unix,
      },
    },
  },
};
