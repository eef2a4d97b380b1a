import { subscriptionEventsV1 } from '@recur/contracts';
import { type SubscribableEventType } from '@recur/vocabulary';
import { unixSeconds } from '@recur/kernel';
import { newInternalEvent, newPublicEvent, type OutboxEvent } from '@recur/messaging';
import { PUBLIC_UPDATE_FIELDS, type SubscriptionEvent } from './subscription';
import { toSubscriptionJson, toSubscriptionMessage } from './subscription.mapper';

/**
 * The edge between the subscription aggregate's domain events and what the service
 * publishes: each becomes its integration event and, where the specification defines one,
 * its public webhook event (`data.object` is the subscription as the API shows it). A trial
 * extension has no public type in the specification, so it is internal only.
 */
export function translateSubscriptionEvent(event: SubscriptionEvent): OutboxEvent[] {
  const { subscription } = event;
  const { tenant, id } = subscription;
  const at = subscription.updatedAt;
  const message = toSubscriptionMessage(subscription);
  const publicEvent = (type: SubscribableEventType, previousAttributes?: object) =>
    newPublicEvent(tenant, type, id, previousAttributes ? { object: toSubscriptionJson(subscription), previous_attributes: previousAttributes } : { object: toSubscriptionJson(subscription) }, at);
  switch (event.kind) {
    case 'created':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionCreatedSchema, { subscription: message }, at), publicEvent('subscription.created')];
    case 'updated': {
      const internal = newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionUpdatedSchema, { subscription: message, changedFields: event.changedFields }, at);
      // The specification's subscription.updated is plan or quantity changed, or the end set or
      // kept; add-ons, discounts and pending changes are told to other services only.
      const publicFields = event.changedFields.filter((field) => PUBLIC_UPDATE_FIELDS.includes(field));
      if (publicFields.length === 0) return [internal];
      const previous = toSubscriptionJson(event.previous) as unknown as Record<string, unknown>;
      return [internal, publicEvent('subscription.updated', Object.fromEntries(publicFields.map((field) => [field, previous[field]])))];
    }
    case 'trial_extended':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionTrialExtendedSchema, { subscription: message, previousTrialEnd: BigInt(unixSeconds(event.previousTrialEnd)) }, at)];
    case 'activated':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionActivatedSchema, { subscription: message }, at), publicEvent('subscription.activated')];
    case 'paused':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionPausedSchema, { subscription: message }, at), publicEvent('subscription.paused')];
    case 'resumed':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionResumedSchema, { subscription: message }, at), publicEvent('subscription.resumed')];
    case 'cancelled':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionCancelledSchema, { subscription: message }, at), publicEvent('subscription.cancelled')];
    case 'completed':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionCompletedSchema, { subscription: message }, at), publicEvent('subscription.completed')];
    case 'past_due':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionPastDueSchema, { subscription: message, invoiceId: event.invoiceId }, at), publicEvent('subscription.past_due')];
    case 'reactivated':
      return [newInternalEvent(tenant, id, subscriptionEventsV1.SubscriptionReactivatedSchema, { subscription: message }, at), publicEvent('subscription.reactivated')];
  }
}
