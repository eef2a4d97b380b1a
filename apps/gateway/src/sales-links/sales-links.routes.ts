import type { salesLinkV1 } from '@recur/contracts';
import { ListQueryDto, listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { CreateSalesLinkDto } from './sales-links.dto';

export interface SalesLinkJson {
  id: string;
  object: 'sales_link';
  livemode: boolean;
  kind: string;
  title: string;
  plan_id: string;
  billing_interval: string;
  trial_days: number;
  allow_promotion_codes: boolean;
  success_url: string | null;
  active: boolean;
  url: string;
  created: number;
  updated: number;
}

export interface SalesLinkCheckoutJson {
  id: string;
  object: 'sales_link_checkout';
  livemode: boolean;
  sales_link: string;
  customer: string;
  subscription: string | null;
  invoice: string | null;
  status: string;
  created: number;
  completed_at: number | null;
}

export function presentSalesLink(link: salesLinkV1.SalesLink, salesLinkUrl: string): SalesLinkJson {
  return {
    id: link.id,
    object: 'sales_link',
    livemode: link.livemode,
    kind: link.kind,
    title: link.title,
    plan_id: link.planId,
    billing_interval: link.billingInterval,
    trial_days: link.trialDays,
    allow_promotion_codes: link.allowPromotionCodes,
    success_url: link.successUrl || null,
    active: link.active,
    url: `${salesLinkUrl}/${link.token}`,
    created: Number(link.created),
    updated: Number(link.updated),
  };
}

export function presentCheckout(checkout: salesLinkV1.SalesLinkCheckout): SalesLinkCheckoutJson {
  return {
    id: checkout.id,
    object: 'sales_link_checkout',
    livemode: checkout.livemode,
    sales_link: checkout.salesLinkId,
    customer: checkout.customerId,
    subscription: checkout.subscriptionId || null,
    invoice: checkout.invoiceId || null,
    status: checkout.status,
    created: Number(checkout.created),
    completed_at: checkout.completed === 0n ? null : Number(checkout.completed),
  };
}

export const SALES_LINK_SCHEMA = responseSchema<SalesLinkJson>('SalesLink', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'kind', 'title', 'plan_id', 'billing_interval', 'trial_days', 'allow_promotion_codes', 'success_url', 'active', 'url', 'created', 'updated'],
  properties: {
    id: { type: 'string', example: 'slink_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['sales_link'] },
    livemode: { type: 'boolean' },
    kind: { type: 'string', enum: ['plan', 'one_time'], description: 'What the link sells: `plan`, a subscription to plan_id at billing_interval; `one_time`, one payment of the price of one billing_interval period of plan_id, on a one-off invoice (no subscription, no trial, no promotion codes).' },
    title: { type: 'string' },
    plan_id: { type: 'string' },
    billing_interval: { type: 'string', enum: ['monthly', 'quarterly', 'yearly'] },
    trial_days: { type: 'integer', description: 'Each sale starts with this trial; 0 for none.' },
    allow_promotion_codes: { type: 'boolean' },
    success_url: { type: ['string', 'null'], description: 'Where the buyer is sent once the sale is paid (at once for a trial); {CHECKOUT_ID} in it is replaced by the sale id.' },
    active: { type: 'boolean', description: 'An inactive link\'s page answers 410.' },
    url: { type: 'string', format: 'uri', description: 'The hosted checkout page: public, with an unguessable token. Share it; deactivate the link to stop sales.' },
    created: { type: 'integer', description: 'Unix seconds.' },
    updated: { type: 'integer', description: 'Unix seconds.' },
  },
});

export const SALES_LINK_CHECKOUT_SCHEMA = responseSchema<SalesLinkCheckoutJson>('SalesLinkCheckout', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'sales_link', 'customer', 'subscription', 'invoice', 'status', 'created', 'completed_at'],
  properties: {
    id: { type: 'string', example: 'chk_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['sales_link_checkout'] },
    livemode: { type: 'boolean' },
    sales_link: { type: 'string' },
    customer: { type: 'string', description: 'The buyer: an existing customer of the app with the same e-mail, or a new one.' },
    subscription: { type: ['string', 'null'], description: 'The subscription a `plan` sale made; null for a `one_time` sale.' },
    invoice: { type: ['string', 'null'], description: 'The invoice to pay (billing_reason `sales_link`): a `plan` sale\'s first, a `one_time` sale\'s one-off invoice; null for a sale with a trial.' },
    status: { type: 'string', enum: ['open', 'completed'], description: '`completed` once the sale\'s invoice is paid (at once for a trial).' },
    created: { type: 'integer', description: 'Unix seconds.' },
    completed_at: { type: ['integer', 'null'], description: 'Unix seconds.' },
  },
});

/** `/v1/sales-links` → SubscriptionService. Rules live in the service. */
export const SALES_LINK_ROUTES = defineRoutes('Sales links', [
  route({
    method: 'POST', path: '/v1/sales-links', summary: 'Create a sales link', body: CreateSalesLinkDto, response: SALES_LINK_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body, salesLinkUrl }) => {
      const { salesLink } = await services.subscription.createSalesLink({
        tenant,
        kind: body.kind,
        title: body.title,
        planId: body.plan_id,
        billingInterval: body.billing_interval,
        trialDays: body.trial_days ?? 0,
        allowPromotionCodes: body.allow_promotion_codes ?? false,
        successUrl: body.success_url ?? '',
        requestId: commandId,
      });
      return presentSalesLink(salesLink!, salesLinkUrl);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/sales-links', summary: 'List sales links', query: ListQueryDto, response: SALES_LINK_SCHEMA,
    handler: async ({ services, tenant, query, salesLinkUrl }) => {
      const { salesLinks, page } = await services.subscription.listSalesLinks({ tenant, page: pageRequest(query) });
      return listEnvelope('/v1/sales-links', salesLinks.map((link) => presentSalesLink(link, salesLinkUrl)), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/sales-links/:id', summary: 'Retrieve a sales link', response: SALES_LINK_SCHEMA,
    handler: async ({ services, tenant, params, salesLinkUrl }) => presentSalesLink((await services.subscription.getSalesLink({ tenant, id: params.id })).salesLink!, salesLinkUrl),
  }),
  listRoute({
    method: 'GET', path: '/v1/sales-links/:id/checkouts', summary: 'List sales made through a link', query: ListQueryDto, response: SALES_LINK_CHECKOUT_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      const { checkouts, page } = await services.subscription.listSalesLinkCheckouts({ tenant, id: params.id, page: pageRequest(query) });
      return listEnvelope(`/v1/sales-links/${params.id}/checkouts`, checkouts.map(presentCheckout), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/sales-links/:id/deactivate', summary: 'Deactivate a sales link (409 sales_link_already_inactive if it is)', response: SALES_LINK_SCHEMA,
    handler: async ({ services, tenant, commandId, params, salesLinkUrl }) =>
      presentSalesLink((await services.subscription.setSalesLinkActive({ tenant, id: params.id, active: false, requestId: commandId })).salesLink!, salesLinkUrl),
  }),
  route({
    method: 'POST', path: '/v1/sales-links/:id/activate', summary: 'Activate a sales link (409 sales_link_already_active if it is)', response: SALES_LINK_SCHEMA,
    handler: async ({ services, tenant, commandId, params, salesLinkUrl }) =>
      presentSalesLink((await services.subscription.setSalesLinkActive({ tenant, id: params.id, active: true, requestId: commandId })).salesLink!, salesLinkUrl),
  }),
]);
