import { COLLECTION_METHODS, TAX_EXEMPT_STATUSES } from '@recur/vocabulary';
import {
  presentSubscription,
  presentSubscriptionAddon,
  presentUpcomingInvoice,
  SUBSCRIPTION_STATUS_VALUES,
  type SubscriptionAddonJson,
  type SubscriptionJson,
  type UpcomingInvoiceJson,
} from '@recur/contracts';
import { listEnvelope, ListQueryDto, listWindow, pageRequest } from '../http/list';
import { TAX_AMOUNT_SCHEMA } from '../tax-rates/tax-rates.routes';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import {
  ApplyPromotionCodeDto,
  CancelSubscriptionDto,
  ChangeBillingIntervalDto,
  ChangePlanDto,
  CreateSubscriptionDto,
  ExtendTrialDto,
  ListSubscriptionsQueryDto,
  PauseSubscriptionDto,
  SubscriptionAddonDto,
  UpdateSubscriptionAddonDto,
} from './subscriptions.dto';

const seconds = (description: string) => ({ type: 'integer', description: `${description} (unix seconds).` });
const nullableSeconds = (description: string) => ({ type: ['integer', 'null'], description: `${description} (unix seconds), or null.` });

const PRICE_SCHEMA = {
  type: 'object',
  description: "The plan's pricing when the subscription was sold; later plan edits do not change it.",
  required: ['plan_name', 'pricing_model', 'amount_monthly', 'currency', 'package_size', 'tiers', 'price_components'],
  properties: {
    plan_name: { type: 'string' },
    pricing_model: { type: 'string' },
    amount_monthly: { type: 'integer' },
    currency: { type: 'string' },
    package_size: { type: 'integer' },
    tiers: { type: 'array', items: { type: 'object' } },
    price_components: { type: 'array', items: { type: 'object' } },
  },
};

export const SUBSCRIPTION_ADDON_SCHEMA = responseSchema<SubscriptionAddonJson>('SubscriptionAddon', {
  type: 'object',
  description: 'An add-on a subscription carries, at the monthly price it was attached at.',
  required: ['object', 'addon', 'name', 'quantity', 'price_monthly', 'currency', 'added'],
  properties: {
    object: { type: 'string', enum: ['subscription_addon'] },
    addon: { type: 'string', description: 'The add-on id.' },
    name: { type: 'string' },
    quantity: { type: 'integer', minimum: 1 },
    price_monthly: { type: 'integer', description: 'Per unit and month, in minor units.' },
    currency: { type: 'string' },
    added: seconds('When it was attached'),
  },
});

const DISCOUNT_SCHEMA = {
  type: ['object', 'null'],
  description: "The coupon discounting the subscription's period invoices, or null.",
  required: ['object', 'coupon', 'coupon_name', 'type', 'value', 'currency', 'duration', 'duration_in_periods', 'periods_remaining', 'promotion_code', 'promotion_code_text', 'start'],
  properties: {
    object: { type: 'string', enum: ['discount'] },
    coupon: { type: 'string' },
    coupon_name: { type: 'string' },
    type: { type: 'string', enum: ['percentage', 'fixed_amount'] },
    value: { type: 'number' },
    currency: { type: ['string', 'null'] },
    duration: { type: 'string', enum: ['once', 'repeating', 'forever'] },
    duration_in_periods: { type: ['integer', 'null'] },
    periods_remaining: { type: ['integer', 'null'], description: 'Period invoices it still discounts; null for forever.' },
    promotion_code: { type: 'string', description: 'The promotion code id that applied it.' },
    promotion_code_text: { type: 'string' },
    start: seconds('When it was applied'),
  },
};

const PENDING_CHANGE_SCHEMA = {
  type: ['object', 'null'],
  description: 'A plan or quantity change deferred to the period end (effective: period_end), or null.',
  required: ['plan', 'quantity', 'price', 'effective_at', 'requested'],
  properties: {
    plan: { type: 'string' },
    quantity: { type: 'integer' },
    price: PRICE_SCHEMA,
    effective_at: seconds('When it applies'),
    requested: seconds('When it was requested'),
  },
};

export const UPCOMING_INVOICE_SCHEMA = responseSchema<UpcomingInvoiceJson>('UpcomingInvoice', {
  type: 'object',
  description: "Exactly what the subscription's next period invoice will bill, priced by the function the renewal uses.",
  required: ['object', 'subscription', 'customer', 'currency', 'billing_reason', 'period_start', 'period_end', 'lines', 'subtotal', 'discount', 'total_tax_amounts', 'tax', 'total', 'total_excluding_tax', 'customer_tax_exempt', 'starting_balance', 'ending_balance', 'amount_due'],
  properties: {
    object: { type: 'string', enum: ['upcoming_invoice'] },
    subscription: { type: 'string' },
    customer: { type: 'string' },
    currency: { type: 'string' },
    billing_reason: { type: 'string' },
    period_start: seconds('Start of the billed period (when the invoice is raised)'),
    period_end: seconds('End of the billed period'),
    lines: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kind', 'description', 'quantity', 'amount', 'period', 'tax_amounts'],
        properties: {
          kind: { type: 'string', enum: ['plan', 'usage', 'addon', 'proration'] },
          description: { type: 'string' },
          quantity: { type: 'integer', description: 'Units billed; for usage, the units beyond the included quantity.' },
          amount: { type: 'integer', description: 'Minor units; negative for a credit.' },
          period: {
            type: ['object', 'null'],
            description: 'The period the line covers, as the invoice line will carry it: usage (billed in arrears) the period it was used in so far; null for a proration.',
            required: ['start', 'end'],
            properties: { start: seconds('Start of the period'), end: seconds('End of the period') },
          },
          tax_amounts: { type: 'array', items: TAX_AMOUNT_SCHEMA, description: 'The tax the invoice line will carry.' },
        },
      },
    },
    subtotal: { type: 'integer' },
    discount: { type: 'integer' },
    total_tax_amounts: { type: 'array', items: TAX_AMOUNT_SCHEMA, description: 'The tax per rate, as the invoice will have it (docs/api/invoices.md#tax-and-rounding).' },
    tax: { type: 'integer', description: 'All tax, inclusive and exclusive.' },
    total: { type: 'integer', description: 'subtotal − discount + exclusive tax.' },
    total_excluding_tax: { type: 'integer' },
    customer_tax_exempt: { type: 'string', enum: [...TAX_EXEMPT_STATUSES] },
    starting_balance: { type: 'integer', description: "The customer's balance the invoice will find (negative: credit), as its finalization reads it now (docs/api/customer-balance.md#invoices-consume-credit)." },
    ending_balance: { type: 'integer', description: 'The balance after the invoice applies its credit; ending_balance − starting_balance is the credit applied.' },
    amount_due: { type: 'integer', description: 'total − the credit applied: what the invoice will ask for.' },
  },
});

export const SUBSCRIPTION_SCHEMA = responseSchema<SubscriptionJson>('Subscription', {
  type: 'object',
  required: [
    'id', 'object', 'livemode', 'customer', 'plan', 'status', 'billing_interval', 'quantity', 'price', 'current_period_start', 'current_period_end',
    'trial_start', 'trial_end', 'cancel_at_period_end', 'cancelled_at', 'ended_at', 'paused_at', 'resume_at', 'billing_cycles', 'periods_billed', 'collection_method',
    'reactivated_from', 'test_clock', 'metadata', 'created', 'updated', 'add_ons', 'discount', 'pending_change',
  ],
  properties: {
    id: { type: 'string', example: 'sub_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['subscription'] },
    livemode: { type: 'boolean' },
    customer: { type: 'string', description: 'The customer id.' },
    plan: { type: 'string', description: 'The plan id.' },
    status: { type: 'string', enum: [...SUBSCRIPTION_STATUS_VALUES] },
    billing_interval: { type: 'string', enum: ['monthly', 'quarterly', 'yearly'] },
    quantity: { type: 'integer', minimum: 1 },
    price: PRICE_SCHEMA,
    current_period_start: seconds('Start of the current period (the trial while trialing)'),
    current_period_end: seconds('End of the current period'),
    trial_start: nullableSeconds('Start of the trial'),
    trial_end: nullableSeconds('End of the trial'),
    cancel_at_period_end: { type: 'boolean', description: 'True when it ends at the current period\'s end.' },
    cancelled_at: nullableSeconds('When it was cancelled or set to end'),
    ended_at: nullableSeconds('When it ended'),
    paused_at: nullableSeconds('When it was paused'),
    resume_at: nullableSeconds('When the clock resumes it'),
    billing_cycles: { type: ['integer', 'null'], description: 'Periods billed before it completes, or null (until cancelled).' },
    collection_method: { type: 'string', enum: [...COLLECTION_METHODS], description: 'How its invoices are collected; each invoice it raises carries it (see the Invoice schema).' },
    periods_billed: { type: 'integer' },
    reactivated_from: { type: ['string', 'null'], description: 'The cancelled subscription this one brought back.' },
    test_clock: { type: ['string', 'null'], description: "The customer's test clock (sandbox), or null." },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: seconds('Creation time'),
    updated: seconds('Last change'),
    add_ons: { type: 'array', items: { $ref: '#/components/schemas/SubscriptionAddon' } },
    discount: DISCOUNT_SCHEMA,
    pending_change: PENDING_CHANGE_SCHEMA,
  },
});

const present = (answer: { subscription?: Parameters<typeof presentSubscription>[0] }) => presentSubscription(answer.subscription!);

/** `/v1/subscriptions` → SubscriptionService. Rules (states, dates, the catalog) live in the service. */
export const SUBSCRIPTION_ROUTES = defineRoutes('Subscriptions', [
  route({
    method: 'POST', path: '/v1/subscriptions', summary: 'Create a subscription', body: CreateSubscriptionDto, response: SUBSCRIPTION_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => present(await services.subscription.createSubscription({
      tenant,
      customerId: body.customer,
      planId: body.plan,
      billingInterval: body.billing_interval,
      quantity: body.quantity,
      trialDays: body.trial_days,
      trialEnd: body.trial_end === undefined ? undefined : BigInt(body.trial_end),
      billingCycles: body.billing_cycles,
      collectionMethod: body.collection_method ?? '',
      metadata: body.metadata ?? {},
      addOns: (body.add_ons ?? []).map((addOn) => ({ addonId: addOn.addon, quantity: addOn.quantity })),
      promotionCode: body.promotion_code,
      requestId: commandId,
    })),
  }),
  listRoute({
    method: 'GET', path: '/v1/subscriptions', summary: 'List subscriptions', query: ListSubscriptionsQueryDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { subscriptions, page } = await services.subscription.listSubscriptions({
        tenant, page: pageRequest(query), customerId: query.customer, status: query.status,
      });
      return listEnvelope('/v1/subscriptions', subscriptions.map(presentSubscription), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/subscriptions/:id', summary: 'Retrieve a subscription', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, params }) => present(await services.subscription.getSubscription({ tenant, id: params.id })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/cancel', summary: 'Cancel a subscription (now, or at_period_end)', body: CancelSubscriptionDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.cancelSubscription({ tenant, id: params.id, atPeriodEnd: body.at_period_end ?? false, prorate: body.prorate ?? false, refund: body.refund ?? false, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/pause', summary: 'Pause a subscription', body: PauseSubscriptionDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => present(await services.subscription.pauseSubscription({
      tenant, id: params.id, resumeAt: body.resume_at === undefined ? undefined : BigInt(body.resume_at), requestId: commandId,
    })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/resume', summary: 'Resume a paused subscription', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.resumeSubscription({ tenant, id: params.id, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/change-plan', summary: 'Change plan or quantity (now, prorated; or at period end, pending)', body: ChangePlanDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => present(await services.subscription.changeSubscriptionPlan({
      tenant, id: params.id, planId: body.plan, quantity: body.quantity, effective: body.effective ?? 'immediately', requestId: commandId,
    })),
  }),
  route({
    method: 'DELETE', path: '/v1/subscriptions/:id/pending-change', summary: 'Cancel a deferred plan change', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.cancelPendingChange({ tenant, id: params.id, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/reactivate', summary: 'Reactivate a cancelled subscription (as a new one), or keep one set to end', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.reactivateSubscription({ tenant, id: params.id, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/extend-trial', summary: 'Extend the trial', body: ExtendTrialDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.extendTrial({ tenant, id: params.id, trialEnd: BigInt(body.trial_end), requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/billing-interval', summary: 'Change the billing interval (a new period starts now)', body: ChangeBillingIntervalDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.changeBillingInterval({ tenant, id: params.id, billingInterval: body.billing_interval, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/promotion-code', summary: 'Apply a promotion code', body: ApplyPromotionCodeDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.applyPromotionCode({ tenant, id: params.id, promotionCode: body.promotion_code, requestId: commandId })),
  }),
  route({
    method: 'DELETE', path: '/v1/subscriptions/:id/promotion-code', summary: 'Remove the promotion code', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.removePromotionCode({ tenant, id: params.id, requestId: commandId })),
  }),
  route({
    method: 'GET', path: '/v1/subscriptions/:id/upcoming-invoice', summary: 'Preview the upcoming invoice', response: UPCOMING_INVOICE_SCHEMA,
    handler: async ({ services, tenant, params }) => presentUpcomingInvoice((await services.subscription.getUpcomingInvoice({ tenant, id: params.id })).upcomingInvoice!),
  }),
  listRoute({
    method: 'GET', path: '/v1/subscriptions/:id/addons', summary: "List a subscription's add-ons", query: ListQueryDto, response: SUBSCRIPTION_ADDON_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      // A subscription carries at most 20 add-ons: one read, paged here.
      const addOns = present(await services.subscription.getSubscription({ tenant, id: params.id })).add_ons;
      const { data, page } = listWindow(addOns, query, 'add-on of this subscription', (addOn) => addOn.addon);
      return listEnvelope(`/v1/subscriptions/${params.id}/addons`, data, query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/addons', summary: 'Add an add-on to a subscription (prorated)', body: SubscriptionAddonDto, response: SUBSCRIPTION_ADDON_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, params, body }) =>
      presentSubscriptionAddon((await services.subscription.addSubscriptionAddon({ tenant, id: params.id, addonId: body.addon, quantity: body.quantity, requestId: commandId })).addOn!),
  }),
  route({
    method: 'PATCH', path: '/v1/subscriptions/:id/addons/:addonId', summary: "Change a subscription add-on's quantity (prorated)", body: UpdateSubscriptionAddonDto, response: SUBSCRIPTION_ADDON_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      presentSubscriptionAddon((await services.subscription.updateSubscriptionAddon({ tenant, id: params.id, addonId: params.addonId, quantity: body.quantity, requestId: commandId })).addOn!),
  }),
  route({
    method: 'DELETE', path: '/v1/subscriptions/:id/addons/:addonId', summary: 'Remove a subscription add-on (the unused part credited)', response: SUBSCRIPTION_ADDON_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) =>
      presentSubscriptionAddon((await services.subscription.removeSubscriptionAddon({ tenant, id: params.id, addonId: params.addonId, requestId: commandId })).addOn!),
  }),
]);
