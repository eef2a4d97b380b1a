import { failedPrecondition, invalidArgument, newId, randomBase62, type TenantRef } from '@recur/kernel';
import { isSubscribableEventType } from '@recur/vocabulary';
import { checkEndpointUrl } from './url-policy';

export type EndpointStatus = 'enabled' | 'disabled';
export const ENDPOINT_STATUSES: readonly EndpointStatus[] = ['enabled', 'disabled'];
export const DESCRIPTION_MAX = 500;
export const ENDPOINTS_PER_APP_MAX = 16;

export interface Endpoint {
  id: string;
  tenant: TenantRef;
  url: string;
  events: string[];
  status: EndpointStatus;
  description: string;
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface EndpointChanges {
  url?: string;
  events?: string[];
  status?: string;
  description?: string;
}

/** Signing secrets look like Stripe's: `whsec_` and 32 base62 characters. */
export const newSigningSecret = (): string => `whsec_${randomBase62(32)}`;

export function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw invalidArgument('events', 'events must name at least one event type');
  events.forEach((type, index) => {
    if (!isSubscribableEventType(type)) {
      throw invalidArgument(`events[${index}]`, `'${type}' is not a subscribable event type (see GET /v1/webhooks/events)`);
    }
  });
  return [...new Set(events)];
}

function checkDescription(description: string): string {
  if (description.length > DESCRIPTION_MAX) throw invalidArgument('description', `description must be at most ${DESCRIPTION_MAX} characters`);
  return description;
}

export function createEndpoint(tenant: TenantRef, fields: { url: string; events: string[]; description?: string }, allowPrivate: boolean, now: Date, existingCount: number): Endpoint {
  if (existingCount >= ENDPOINTS_PER_APP_MAX) throw failedPrecondition('endpoint_limit_reached', `An app may have at most ${ENDPOINTS_PER_APP_MAX} webhook endpoints.`);
  return {
    id: newId('we'),
    tenant,
    url: checkEndpointUrl(fields.url, tenant.livemode, allowPrivate),
    events: checkEvents(fields.events),
    status: 'enabled',
    description: checkDescription(fields.description ?? ''),
    secret: newSigningSecret(),
    createdAt: now,
    updatedAt: now,
  };
}

export function updateEndpoint(endpoint: Endpoint, changes: EndpointChanges, allowPrivate: boolean, now: Date): Endpoint {
  if (changes.status !== undefined && !ENDPOINT_STATUSES.includes(changes.status as EndpointStatus)) {
    throw invalidArgument('status', `status must be one of ${ENDPOINT_STATUSES.join(', ')}`);
  }
  return {
    ...endpoint,
    url: changes.url === undefined ? endpoint.url : checkEndpointUrl(changes.url, endpoint.tenant.livemode, allowPrivate),
    events: changes.events === undefined ? endpoint.events : checkEvents(changes.events),
    status: (changes.status as EndpointStatus | undefined) ?? endpoint.status,
    description: changes.description === undefined ? endpoint.description : checkDescription(changes.description),
    updatedAt: now,
  };
}
