import { SUBSCRIBABLE_EVENT_TYPES, type SubscribableEventType, WEBHOOK_TEST_EVENT_TYPE } from '@recur/vocabulary';

/**
 * The OpenAPI `webhooks` section: what Recur POSTs to an endpoint for each event type
 * (docs/webhooks.md#event-types). The envelope is the specification's; `data.object` is the
 * resource as the API shows it, and each type's own fields are the ones its service's event
 * translator writes (customer-events, subscription-events, invoice-events, wallet-events and
 * usage-events translators; webhook-dispatch's test delivery).
 */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const PREVIOUS_ATTRIBUTES = { type: 'object', description: 'The old value of each public field that changed.', additionalProperties: true };
const ATTEMPT_COUNT = { type: 'integer', description: 'Payment attempts so far, as Stripe counts them: the first failed payment is 1, each failed automatic retry adds one.' };
const TOP_UP = { ...ref('WalletTopUp'), description: 'The top-up credited (wallet.topped_up) or started (wallet.auto_recharge).' };

/** Each type's `data`: the resource under `object`, and the fields the type adds beside it. */
const EVENT_DATA: Record<SubscribableEventType | typeof WEBHOOK_TEST_EVENT_TYPE, { object: object; fields?: Record<string, object>; required?: string[] }> = {
  'customer.created': { object: ref('Customer') },
  'customer.updated': {
    object: ref('Customer'),
    fields: { previous_attributes: PREVIOUS_ATTRIBUTES, source: { type: 'string', enum: ['api', 'portal'], description: 'Who made the change: the account (`api`) or the customer in the customer portal (`portal`).' } },
    required: ['previous_attributes', 'source'],
  },
  'customer.deleted': { object: ref('Customer') },
  'invoice.created': { object: ref('Invoice'), fields: { source: { type: 'string', description: 'What raised the invoice: the invoice’s `billing_reason` (`manual`, `subscription_cycle`, …).' } }, required: ['source'] },
  'invoice.paid': { object: ref('Invoice'), fields: { payment: { type: ['string', 'null'], description: 'The payment that settled it (`pay_…`); null when nothing was due.' } }, required: ['payment'] },
  'invoice.payment_failed': {
    object: ref('Invoice'),
    fields: {
      payment: { type: 'string', description: 'The failed payment (`pay_…`).' }, failure_code: { type: 'string', description: 'The provider’s reason.' },
      attempt_count: ATTEMPT_COUNT,
      next_payment_attempt: { type: ['integer', 'null'], description: 'When the next automatic retry is pushed (unix seconds); null when none follows (docs/api/dunning.md#smart-retries).' },
    },
    required: ['payment', 'failure_code'],
  },
  'invoice.voided': { object: ref('Invoice') },
  'credit_note.created': {
    object: ref('CreditNote'),
    fields: { invoice: { ...ref('Invoice'), description: 'The refunded invoice after the credit note (its amount_refunded; refunded once all of it is back).' } },
    required: ['invoice'],
  },
  'invoice.refunded': { object: ref('Invoice'), fields: { credit_note: { ...ref('CreditNote'), description: 'The credit note of the refund.' } }, required: ['credit_note'] },
  'invoice.dunning_retry': {
    object: ref('Invoice'),
    fields: {
      reminder: { type: 'integer', description: 'Which reminder this is, from 1.' },
      reminder_count: { type: 'integer', description: 'How many reminders the schedule sends.' },
      final: { type: 'boolean', description: 'True for the last reminder: unpaid after it, the subscription goes past due.' },
      attempt_count: ATTEMPT_COUNT,
      next_payment_attempt: { type: ['integer', 'null'], description: 'Null here: reminders start after the last automatic retry.' },
    },
    required: ['reminder', 'reminder_count', 'final'],
  },
  'subscription.created': { object: ref('Subscription') },
  'subscription.updated': { object: ref('Subscription'), fields: { previous_attributes: PREVIOUS_ATTRIBUTES }, required: ['previous_attributes'] },
  'subscription.activated': { object: ref('Subscription') },
  'subscription.paused': { object: ref('Subscription') },
  'subscription.resumed': { object: ref('Subscription') },
  'subscription.past_due': { object: ref('Subscription') },
  'subscription.completed': { object: ref('Subscription') },
  'subscription.cancelled': { object: ref('Subscription') },
  'subscription.reactivated': { object: ref('Subscription') },
  'wallet.topped_up': { object: ref('Wallet'), fields: { top_up: TOP_UP }, required: ['top_up'] },
  'wallet.low_balance': { object: ref('Wallet'), fields: { threshold: { type: 'integer', description: 'The threshold the balance fell under (minor units).' } }, required: ['threshold'] },
  'wallet.auto_recharge': { object: ref('Wallet'), fields: { top_up: TOP_UP }, required: ['top_up'] },
  'usage.threshold_reached': { object: ref('UsageAlert') },
  [WEBHOOK_TEST_EVENT_TYPE]: {
    object: {
      type: 'object',
      description: 'The endpoint the test was sent to.',
      required: ['id', 'object', 'url'],
      properties: { id: { type: 'string' }, object: { type: 'string', enum: ['webhook_endpoint'] }, url: { type: 'string' } },
    },
    fields: { message: { type: 'string' } },
    required: ['message'],
  },
};

/** `invoice.payment_failed` → `InvoicePaymentFailedEvent`. */
export const eventSchemaName = (type: string) => `${type.split(/[._]/).map((word) => word[0].toUpperCase() + word.slice(1)).join('')}Event`;

const DESCRIPTIONS: Record<string, string> = { ...SUBSCRIBABLE_EVENT_TYPES, [WEBHOOK_TEST_EVENT_TYPE]: 'Test event to one endpoint only (POST /v1/webhooks/{id}/test); never subscribed to.' };

/** The envelope of one event type, for `components.schemas`. */
function eventSchema(type: string) {
  const { object, fields = {}, required = [] } = EVENT_DATA[type as keyof typeof EVENT_DATA];
  return {
    type: 'object',
    description: `The \`${type}\` event: ${DESCRIPTIONS[type]}`,
    // A delivery's body has no `object`; `/v1/events` answers the same envelope with `object: event`.
    required: ['id', 'type', 'created', 'livemode', 'data'],
    properties: {
      id: { type: 'string', description: 'The event’s id (`evt_…`), the same on every delivery attempt: store it and skip an id already handled.' },
      object: { type: 'string', enum: ['event'], description: 'In `/v1/events` answers only; a delivery’s body has no `object`.' },
      type: { type: 'string', enum: [type] },
      created: { type: 'integer', description: 'Unix seconds of the change.' },
      livemode: { type: 'boolean', description: '`false` when the event comes from a sandbox (test) key.' },
      data: { type: 'object', required: ['object', ...required], properties: { object, ...fields }, additionalProperties: true },
    },
  };
}

const SIGNATURE_PARAMETERS = [
  {
    name: 'X-Recur-Signature',
    in: 'header',
    required: true,
    description: '`sha256=` and the lowercase hex HMAC-SHA256 of `<X-Recur-Timestamp>.<raw body>`, keyed with the endpoint secret. Verify it on the raw bytes (`@recur/webhooks`).',
    schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
  },
  { name: 'X-Recur-Timestamp', in: 'header', required: true, description: 'Unix milliseconds of the attempt, as a decimal string; refuse one older than 300 seconds.', schema: { type: 'string', pattern: '^[0-9]+$' } },
];

/** Every event type's schema, and the `webhooks` section that POSTs each. */
export function webhookEvents(): { schemas: Record<string, object>; webhooks: Record<string, object> } {
  const schemas: Record<string, object> = {};
  const webhooks: Record<string, object> = {};
  for (const type of Object.keys(EVENT_DATA)) {
    const name = eventSchemaName(type);
    schemas[name] = eventSchema(type);
    webhooks[type] = {
      post: {
        operationId: `webhook${name}`,
        summary: `${type}`,
        description: `${DESCRIPTIONS[type]} Recur POSTs this envelope to every enabled endpoint subscribed to \`${type}\`, signed with the endpoint secret; answer any 2xx within 30 seconds, or it retries (5 attempts in all).`,
        tags: ['Webhook events'],
        security: [],
        parameters: SIGNATURE_PARAMETERS,
        requestBody: { required: true, content: { 'application/json': { schema: ref(name) } } },
        responses: { '200': { description: 'Received: any 2xx status ends the delivery.' } },
      },
    };
  }
  return { schemas, webhooks };
}
