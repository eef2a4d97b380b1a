import { type DeliveryAttemptJson, presentDelivery, presentWebhookEndpoint, type WebhookDeliveryJson, type WebhookEndpointJson } from '@recur/contracts';
import { SUBSCRIBABLE_EVENT_TYPES } from '@recur/vocabulary';
import { listEnvelope, ListQueryDto, pageRequest } from '../http/list';
import { defineRoutes, listRoute, type ObjectSchema, responseSchema, route } from '../routing/define-routes';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto } from './webhooks.dto';

/** What `DELETE /v1/webhooks/:id` answers. */
export interface DeletedWebhookEndpointJson {
  id: string;
  object: 'webhook_endpoint';
  deleted: true;
}

/** One entry of `GET /v1/webhooks/events`. */
export interface EventTypeJson {
  type: string;
  description: string;
}

const attempt: ObjectSchema<DeliveryAttemptJson> = {
  type: 'object',
  required: ['number', 'attempted_at_ms', 'status_code', 'error', 'duration_ms', 'response_excerpt', 'manual'],
  properties: {
    number: { type: 'integer' },
    attempted_at_ms: { type: 'integer', description: 'Unix milliseconds.' },
    status_code: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
    duration_ms: { type: 'integer' },
    response_excerpt: { type: 'string', description: 'The first 1 KB of the answer.' },
    manual: { type: 'boolean', description: 'Asked for by a retry request.' },
  },
};

export const WEBHOOK_ENDPOINT_SCHEMA = responseSchema<WebhookEndpointJson>('WebhookEndpoint', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'url', 'events', 'status', 'description', 'created', 'updated'],
  properties: {
    id: { type: 'string', example: 'we_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['webhook_endpoint'] },
    livemode: { type: 'boolean' },
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { type: 'string' } },
    status: { type: 'string', enum: ['enabled', 'disabled'] },
    description: { type: 'string' },
    created: { type: 'integer' },
    updated: { type: 'integer' },
    secret: { type: 'string', description: 'The signing secret (whsec_…); only in the answer to creation.' },
  },
});

export const DELETED_WEBHOOK_ENDPOINT_SCHEMA = responseSchema<DeletedWebhookEndpointJson>('DeletedWebhookEndpoint', {
  type: 'object',
  required: ['id', 'object', 'deleted'],
  properties: { id: { type: 'string' }, object: { type: 'string', enum: ['webhook_endpoint'] }, deleted: { type: 'boolean', description: 'Always true.' } },
});

export const EVENT_TYPE_SCHEMA = responseSchema<EventTypeJson>('EventType', {
  type: 'object',
  required: ['type', 'description'],
  properties: { type: { type: 'string' }, description: { type: 'string' } },
});

export const WEBHOOK_DELIVERY_SCHEMA = responseSchema<WebhookDeliveryJson>('WebhookDelivery', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'endpoint', 'event', 'status', 'attempts', 'next_attempt_at_ms', 'created'],
  properties: {
    id: { type: 'string', example: 'whd_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['webhook_delivery'] },
    livemode: { type: 'boolean' },
    endpoint: { type: 'string' },
    event: { type: 'object', required: ['id', 'type'], properties: { id: { type: 'string' }, type: { type: 'string' } } },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    attempts: { type: 'array', items: attempt },
    next_attempt_at_ms: { type: ['integer', 'null'] },
    created: { type: 'integer' },
  },
});

/** `/v1/webhooks` → WebhookDispatchService. */
export const WEBHOOK_ROUTES = defineRoutes('Webhooks', [
  route({
    method: 'POST', path: '/v1/webhooks', summary: 'Create a webhook endpoint', body: CreateWebhookEndpointDto, response: WEBHOOK_ENDPOINT_SCHEMA, status: 201,
    handler: async ({ services, tenant, commandId, body }) => {
      const { endpoint } = await services.webhookDispatch.createEndpoint({ tenant, url: body.url, events: body.events, description: body.description ?? '', requestId: commandId });
      return presentWebhookEndpoint(endpoint!);
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/webhooks', summary: 'List webhook endpoints', query: ListQueryDto, response: WEBHOOK_ENDPOINT_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { endpoints, page } = await services.webhookDispatch.listEndpoints({ tenant, page: pageRequest(query) });
      return listEnvelope('/v1/webhooks', endpoints.map(presentWebhookEndpoint), query, page);
    },
  }),
  /** The subscribable types (the specification's 22 and those beyond it) with their meanings (`webhook.test` is sent on request only); one page holds them all. */
  listRoute({
    method: 'GET', path: '/v1/webhooks/events', summary: 'List the available event types', response: EVENT_TYPE_SCHEMA,
    handler: async () => {
      const data = Object.entries(SUBSCRIBABLE_EVENT_TYPES).map(([type, description]) => ({ type, description }));
      return listEnvelope('/v1/webhooks/events', data, { limit: data.length }, undefined);
    },
  }),
  route({
    method: 'PATCH', path: '/v1/webhooks/:id', summary: 'Update a webhook endpoint', body: UpdateWebhookEndpointDto, response: WEBHOOK_ENDPOINT_SCHEMA,
    handler: async ({ services, tenant, commandId, params, body }) => {
      const { endpoint } = await services.webhookDispatch.updateEndpoint({
        tenant,
        id: params.id,
        url: body.url,
        events: body.events ?? [],
        setEvents: body.events !== undefined,
        status: body.status,
        description: body.description,
        requestId: commandId,
      });
      return presentWebhookEndpoint(endpoint!);
    },
  }),
  route({
    method: 'DELETE', path: '/v1/webhooks/:id', summary: 'Delete a webhook endpoint', response: DELETED_WEBHOOK_ENDPOINT_SCHEMA,
    handler: async ({ services, tenant, commandId, params }) => {
      const { endpoint } = await services.webhookDispatch.deleteEndpoint({ tenant, id: params.id, requestId: commandId });
      return { id: endpoint!.id, object: 'webhook_endpoint', deleted: true };
    },
  }),
  /** Queues a `webhook.test` event for this endpoint only; 202: the attempt follows. */
  route({
    method: 'POST', path: '/v1/webhooks/:id/test', summary: 'Send a webhook.test event to this endpoint', response: WEBHOOK_DELIVERY_SCHEMA, status: 202,
    handler: async ({ services, tenant, commandId, params }) => presentDelivery((await services.webhookDispatch.sendTestEvent({ tenant, id: params.id, requestId: commandId })).delivery!),
  }),
  listRoute({
    method: 'GET', path: '/v1/webhooks/:id/deliveries', summary: "List an endpoint's deliveries", query: ListQueryDto, response: WEBHOOK_DELIVERY_SCHEMA,
    handler: async ({ services, tenant, params, query }) => {
      const { deliveries, page } = await services.webhookDispatch.listDeliveries({ tenant, endpointId: params.id, page: pageRequest(query) });
      return listEnvelope(`/v1/webhooks/${params.id}/deliveries`, deliveries.map(presentDelivery), query, page);
    },
  }),
  /** Sends the delivery's event again now, same event id; 202: the attempt follows. */
  route({
    method: 'POST', path: '/v1/webhooks/:id/deliveries/:deliveryId/retry', summary: 'Retry a delivery', response: WEBHOOK_DELIVERY_SCHEMA, status: 202,
    handler: async ({ services, tenant, commandId, params }) =>
      presentDelivery((await services.webhookDispatch.retryDelivery({ tenant, endpointId: params.id, deliveryId: params.deliveryId, requestId: commandId })).delivery!),
  }),
]);
