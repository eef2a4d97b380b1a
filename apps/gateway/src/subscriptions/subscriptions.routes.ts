import { presentSubscription, SUBSCRIPTION_STATUS_VALUES, type SubscriptionJson } from '@recur/contracts';
import { listEnvelope } from '../http/list';
import { defineRoutes, listRoute, planned, responseSchema, route } from '../routing/define-routes';
import { CancelSubscriptionDto, CreateSubscriptionDto, ExtendTrialDto, ListSubscriptionsQueryDto, PauseSubscriptionDto } from './subscriptions.dto';

const seconds = (description: string) => ({ type: 'integer', description: `${description} (unix seconds).` });
const nullableSeconds = (description: string) => ({ type: ['integer', 'null'], description: `${description} (unix seconds), or null.` });

export const SUBSCRIPTION_SCHEMA = responseSchema<SubscriptionJson>('Subscription', {
  type: 'object',
  required: [
    'id', 'object', 'livemode', 'customer', 'plan', 'status', 'billing_interval', 'quantity', 'price', 'current_period_start', 'current_period_end',
    'trial_start', 'trial_end', 'cancel_at_period_end', 'cancelled_at', 'ended_at', 'paused_at', 'resume_at', 'billing_cycles', 'periods_billed',
    'reactivated_from', 'test_clock', 'metadata', 'created', 'updated',
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
    price: {
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
    },
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
    periods_billed: { type: 'integer' },
    reactivated_from: { type: ['string', 'null'], description: 'The cancelled subscription this one brought back.' },
    test_clock: { type: ['string', 'null'], description: "The customer's test clock (sandbox), or null." },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    created: seconds('Creation time'),
    updated: seconds('Last change'),
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
      metadata: body.metadata ?? {},
      requestId: commandId,
    })),
  }),
  listRoute({
    method: 'GET', path: '/v1/subscriptions', summary: 'List subscriptions', query: ListSubscriptionsQueryDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { subscriptions, page } = await services.subscription.listSubscriptions({
        tenant, page: { limit: query.limit ?? 0, offset: query.offset ?? 0 }, customerId: query.customer, status: query.status,
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
      present(await services.subscription.cancelSubscription({ tenant, id: params.id, atPeriodEnd: body.at_period_end ?? false, requestId: commandId })),
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
  planned('POST', '/v1/subscriptions/:id/change-plan', 'Change plan or quantity'),
  planned('DELETE', '/v1/subscriptions/:id/pending-change', 'Cancel a deferred plan change'),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/reactivate', summary: 'Reactivate a cancelled subscription (as a new one), or keep one set to end', response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => present(await services.subscription.reactivateSubscription({ tenant, id: params.id, requestId: commandId })),
  }),
  route({
    method: 'POST', path: '/v1/subscriptions/:id/extend-trial', summary: 'Extend the trial', body: ExtendTrialDto, response: SUBSCRIPTION_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) =>
      present(await services.subscription.extendTrial({ tenant, id: params.id, trialEnd: BigInt(body.trial_end), requestId: commandId })),
  }),
  planned('POST', '/v1/subscriptions/:id/billing-interval', 'Change the billing interval'),
  planned('POST', '/v1/subscriptions/:id/promotion-code', 'Apply a promotion code'),
  planned('DELETE', '/v1/subscriptions/:id/promotion-code', 'Remove the promotion code'),
  planned('GET', '/v1/subscriptions/:id/upcoming-invoice', 'Preview the upcoming invoice'),
  planned('GET', '/v1/subscriptions/:id/addons', "List a subscription's add-ons"),
  planned('POST', '/v1/subscriptions/:id/addons', 'Add an add-on to a subscription'),
  planned('PATCH', '/v1/subscriptions/:id/addons/:addonId', 'Update a subscription add-on'),
  planned('DELETE', '/v1/subscriptions/:id/addons/:addonId', 'Remove a subscription add-on'),
]);
