import { ListQueryDto } from '../http/list';
import type { ResourceDocs } from '../openapi/route-doc';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto } from './webhooks.dto';

const attempt = {
  type: 'object',
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

export const webhooksDocs: ResourceDocs = {
  routes: {
    'POST /v1/webhooks': { body: CreateWebhookEndpointDto, response: 'WebhookEndpoint', status: 201 },
    'GET /v1/webhooks': { query: ListQueryDto, response: 'WebhookEndpoint', list: true },
    'GET /v1/webhooks/events': { response: 'EventType', list: true },
    'PATCH /v1/webhooks/:id': { body: UpdateWebhookEndpointDto, response: 'WebhookEndpoint' },
    'DELETE /v1/webhooks/:id': { response: 'DeletedWebhookEndpoint' },
    'POST /v1/webhooks/:id/test': { response: 'WebhookDelivery', status: 202 },
    'GET /v1/webhooks/:id/deliveries': { query: ListQueryDto, response: 'WebhookDelivery', list: true },
    'POST /v1/webhooks/:id/deliveries/:deliveryId/retry': { response: 'WebhookDelivery', status: 202 },
  },
  schemas: {
    WebhookEndpoint: {
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
    },
    DeletedWebhookEndpoint: { type: 'object', properties: { id: { type: 'string' }, object: { type: 'string', enum: ['webhook_endpoint'] }, deleted: { type: 'boolean', enum: [true] } } },
    EventType: { type: 'object', properties: { type: { type: 'string' }, description: { type: 'string' } } },
    WebhookDelivery: {
      type: 'object',
      properties: {
        id: { type: 'string', example: 'whd_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
        object: { type: 'string', enum: ['webhook_delivery'] },
        livemode: { type: 'boolean' },
        endpoint: { type: 'string' },
        event: { type: 'object', properties: { id: { type: 'string' }, type: { type: 'string' } } },
        status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
        attempts: { type: 'array', items: attempt },
        next_attempt_at_ms: { type: ['integer', 'null'] },
        created: { type: 'integer' },
      },
    },
  },
};
