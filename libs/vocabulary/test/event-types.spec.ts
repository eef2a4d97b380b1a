import { BEYOND_SPECIFICATION_EVENT_TYPES, isSubscribableEventType, SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '../src';

/** The 22 event types of the interface specification's "Event types" table, copied from it by hand. */
const SPEC_EVENT_TYPES = [
  'customer.created', 'customer.updated', 'customer.deleted',
  'invoice.created', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.refunded', 'invoice.dunning_retry',
  'subscription.created', 'subscription.updated', 'subscription.activated', 'subscription.paused', 'subscription.resumed',
  'subscription.past_due', 'subscription.completed', 'subscription.cancelled', 'subscription.reactivated',
  'wallet.topped_up', 'wallet.low_balance', 'wallet.auto_recharge',
  'usage.threshold_reached',
];

describe('public event types', () => {
  it('are exactly the specification’s 22 subscribable types and the ones marked beyond it', () => {
    expect(Object.keys(SUBSCRIBABLE_EVENT_TYPES).sort()).toEqual([...SPEC_EVENT_TYPES, ...BEYOND_SPECIFICATION_EVENT_TYPES].sort());
    expect(BEYOND_SPECIFICATION_EVENT_TYPES.filter((type) => SPEC_EVENT_TYPES.includes(type))).toEqual([]);
  });

  it('never let webhook.test (sent on request only) or an unknown type be subscribed to', () => {
    expect(isSubscribableEventType(WEBHOOK_TEST_EVENT_TYPE)).toBe(false);
    expect(isSubscribableEventType('subscription.renewal_due')).toBe(false);
    expect(isSubscribableEventType('toString')).toBe(false);
    expect(SPEC_EVENT_TYPES.every(isSubscribableEventType)).toBe(true);
  });
});
