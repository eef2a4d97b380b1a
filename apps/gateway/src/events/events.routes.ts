import type { eventV1 } from '@recur/contracts';
import { DomainError, notFound } from '@recur/kernel';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_TEST_EVENT_TYPE } from '@recur/vocabulary';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import { ListEventsQueryDto } from './events.dto';

/** An event as `/v1/events` answers it: the webhook envelope (docs/webhooks.md), with `object`. */
export interface EventJson {
  id: string;
  object: 'event';
  type: string;
  created: number;
  livemode: boolean;
  data: Record<string, unknown>;
}

export const presentEvent = (event: eventV1.Event): EventJson => ({
  id: event.id,
  object: 'event',
  type: event.type,
  created: Number(event.created),
  livemode: event.livemode,
  data: JSON.parse(event.dataJson) as Record<string, unknown>,
});

export const EVENT_SCHEMA = responseSchema<EventJson>('Event', {
  type: 'object',
  required: ['id', 'object', 'type', 'created', 'livemode', 'data'],
  properties: {
    id: { type: 'string', example: 'evt_4f9XkQ2mZ8aBcD1eF3gH5jKl', description: 'The same id every delivery of it carries.' },
    object: { type: 'string', enum: ['event'] },
    type: { type: 'string', enum: Object.keys(SUBSCRIBABLE_EVENT_TYPES) },
    created: { type: 'integer', description: 'Unix seconds of the change.' },
    livemode: { type: 'boolean' },
    data: { type: 'object', description: 'Exactly what the webhook of this event carries: `object` (the resource as the API shows it) and the type\'s own fields.', additionalProperties: true },
  },
});

/** `/v1/events` → WebhookDispatchService's event log: the account's events, as its webhooks carry them. */
export const EVENT_ROUTES = defineRoutes('Events', [
  listRoute({
    method: 'GET', path: '/v1/events', summary: 'List events, newest first', query: ListEventsQueryDto, response: EVENT_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { events, page, filtersApplied } = await services.webhookDispatch.listEvents({
        tenant, page: pageRequest(query),
        type: query.type, createdGte: query.created_gte === undefined ? undefined : BigInt(query.created_gte), createdLte: query.created_lte === undefined ? undefined : BigInt(query.created_lte),
        objectId: query.resource, accountEventsOnly: true,
      });
      // A webhook-dispatch older than these filters ignored them (a rolling upgrade with the gateway
      // ahead of it): its page holds other resources' events and webhook.test ones. Not an answer to give.
      if (!filtersApplied) throw new DomainError('unavailable', 'service_unavailable', 'The events API is not available until webhook-dispatch is upgraded; retry later.');
      return listEnvelope('/v1/events', events.map(presentEvent), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/events/:id', summary: 'Retrieve an event', response: EVENT_SCHEMA,
    handler: async ({ services, tenant, params }) => {
      const { event } = await services.webhookDispatch.getEvent({ tenant, id: params.id });
      // A webhook.test event was made for one endpoint, not by a change of the account's: not one of its events.
      if (event!.type === WEBHOOK_TEST_EVENT_TYPE) throw notFound('event', params.id);
      return presentEvent(event!);
    },
  }),
]);
