import type { Subscription, SubscriptionChange } from '../subscriptions/subscription';

/**
 * A paid invoice brings a past_due subscription back to active (`subscription.activated`,
 * the specification's "back from past due once paid"). Any other status is left as it is:
 * paying an invoice does not revive a cancelled, paused or already active subscription.
 */
export function activateAfterPayment(subscription: Subscription, now: Date): SubscriptionChange {
  if (subscription.status !== 'past_due') return { subscription, events: [] };
  const active: Subscription = { ...subscription, status: 'active', updatedAt: now };
  return { subscription: active, events: [{ kind: 'activated', subscription: active }] };
}
