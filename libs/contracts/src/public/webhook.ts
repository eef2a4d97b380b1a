import type { Delivery, WebhookEndpoint } from '../gen/recur/webhook_dispatch/v1/endpoint_pb';

/** The public JSON of a webhook endpoint; `secret` appears only in the answer to creation. */
export interface WebhookEndpointJson {
  id: string;
  object: 'webhook_endpoint';
  livemode: boolean;
  url: string;
  events: string[];
  status: string;
  description: string;
  created: number;
  updated: number;
  secret?: string;
}

export function presentWebhookEndpoint(endpoint: WebhookEndpoint): WebhookEndpointJson {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint',
    livemode: endpoint.livemode,
    url: endpoint.url,
    events: [...endpoint.events],
    status: endpoint.status,
    description: endpoint.description,
    created: Number(endpoint.created),
    updated: Number(endpoint.updated),
    ...(endpoint.secret ? { secret: endpoint.secret } : {}),
  };
}

export interface DeliveryAttemptJson {
  number: number;
  /** Unix milliseconds: attempts are seconds apart, so seconds would hide the schedule. */
  attempted_at_ms: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string;
  manual: boolean;
}

/** The public JSON of a delivery with its attempts. */
export interface WebhookDeliveryJson {
  id: string;
  object: 'webhook_delivery';
  livemode: boolean;
  endpoint: string;
  event: { id: string; type: string };
  status: string;
  attempts: DeliveryAttemptJson[];
  next_attempt_at_ms: number | null;
  created: number;
}

export function presentDelivery(delivery: Delivery): WebhookDeliveryJson {
  return {
    id: delivery.id,
    object: 'webhook_delivery',
    livemode: delivery.livemode,
    endpoint: delivery.endpointId,
    event: { id: delivery.eventId, type: delivery.eventType },
    status: delivery.status,
    attempts: delivery.attempts.map((attempt) => ({
      number: attempt.number,
      attempted_at_ms: Number(attempt.attemptedAt),
      status_code: attempt.statusCode === 0 ? null : attempt.statusCode,
      error: attempt.error || null,
      duration_ms: attempt.durationMs,
      response_excerpt: attempt.responseExcerpt,
      manual: attempt.manual,
    })),
    next_attempt_at_ms: delivery.nextAttemptAt === 0n ? null : Number(delivery.nextAttemptAt),
    created: Number(delivery.created),
  };
}
