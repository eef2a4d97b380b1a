import { subscriptionEventsV1 } from '@recur/contracts';
import { newInternalEvent, newPublicEvent, type OutboxEvent, type PublicEventData } from '@recur/messaging';
import type { CustomerEvent } from './customer';
import { toCustomerJson, toCustomerMessage } from './customer.mapper';

/**
 * The edge between the customer aggregate's domain events and what the service
 * publishes: each domain event becomes (a) its integration event for other services and
 * (b) its public webhook event. Both are written to the outbox with the change.
 */
export function translateCustomerEvent(event: CustomerEvent): OutboxEvent[] {
  const { customer } = event;
  const { tenant, id } = customer;
  switch (event.kind) {
    case 'created':
      return [
        newInternalEvent(tenant, id, subscriptionEventsV1.CustomerCreatedSchema, { customer: toCustomerMessage(customer) }, customer.createdAt),
        newPublicEvent(tenant, 'customer.created', id, { object: toCustomerJson(customer) }, customer.createdAt),
      ];
    case 'updated': {
      const previous = toCustomerJson(event.previous);
      const data: PublicEventData & { source: string } = {
        object: toCustomerJson(customer),
        // Stripe's previous_attributes: the old value of every public field that changed.
        previous_attributes: Object.fromEntries(event.changedFields.map((field) => [field, previous[field]])),
        // Who made the change: `api` (the account) or `portal` (the customer, in the customer portal).
        source: event.source,
      };
      return [
        newInternalEvent(
          tenant,
          id,
          subscriptionEventsV1.CustomerUpdatedSchema,
          { customer: toCustomerMessage(customer), previous: toCustomerMessage(event.previous), changedFields: event.changedFields },
          customer.updatedAt,
        ),
        newPublicEvent(tenant, 'customer.updated', id, data, customer.updatedAt),
      ];
    }
    case 'deleted':
      return [
        newInternalEvent(tenant, id, subscriptionEventsV1.CustomerDeletedSchema, { customer: toCustomerMessage(customer) }, customer.updatedAt),
        newPublicEvent(tenant, 'customer.deleted', id, { object: toCustomerJson(customer) }, customer.updatedAt),
      ];
  }
}
