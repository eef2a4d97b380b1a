/**
 * The public webhook event types: the 22 subscribable types of the interface specification,
 * then the ones Recur adds where the specification has none (`BEYOND_SPECIFICATION_EVENT_TYPES`),
 * plus `webhook.test`, which is only ever sent to one endpoint on request.
 */
export const SUBSCRIBABLE_EVENT_TYPES = {
  'customer.created': 'A customer was created.',
  'customer.updated': "A customer changed, by the account holder or in the customer's own portal.",
  'customer.deleted': 'A customer was deleted.',
  'invoice.created': 'An invoice was raised (renewal, by hand, top-up, sales link); it carries the payment link.',
  'invoice.paid': 'An invoice settled.',
  'invoice.payment_failed': 'A payment attempt failed at the provider; the invoice becomes failed and reminders start.',
  'invoice.voided': 'An invoice was voided and will not be collected.',
  'invoice.refunded': 'A paid invoice was refunded in full.',
  'invoice.dunning_retry': 'A payment failed and the customer was sent a reminder; the event says which one.',
  'subscription.created': 'A subscription was created.',
  'subscription.updated': 'Plan or quantity changed, or the end of the subscription was set or kept.',
  'subscription.activated': 'Renewed into a new period, or back from past due once paid.',
  'subscription.paused': 'A subscription was paused.',
  'subscription.resumed': 'A paused subscription resumed.',
  'subscription.past_due': 'The final reminder went out unpaid.',
  'subscription.completed': 'An instalment plan finished, or a one-time purchase was billed.',
  'subscription.cancelled': 'A subscription ended.',
  'subscription.reactivated': 'A cancelled subscription was brought back, as a new one.',
  'wallet.topped_up': 'A top-up was paid and credited to the prepaid wallet.',
  'wallet.low_balance': 'A prepaid wallet fell under its threshold.',
  'wallet.auto_recharge': 'A prepaid wallet started topping itself up.',
  'usage.threshold_reached': 'A subscriber reached 80 % or 100 % of a usage limit.',
  // Beyond the specification (Stripe's names):
  'credit_note.created': 'A credit note was issued: a refund, in full or in part, of a paid invoice.',
} as const;

/** The subscribable types the specification does not list; each is documented in docs/webhooks.md#event-types. */
export const BEYOND_SPECIFICATION_EVENT_TYPES: readonly string[] = ['credit_note.created'];

export type SubscribableEventType = keyof typeof SUBSCRIBABLE_EVENT_TYPES;
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';
export type PublicEventType = SubscribableEventType | typeof WEBHOOK_TEST_EVENT_TYPE;

export function isSubscribableEventType(type: string): type is SubscribableEventType {
  return Object.prototype.hasOwnProperty.call(SUBSCRIBABLE_EVENT_TYPES, type);
}
