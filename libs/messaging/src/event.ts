import { create, type DescMessage, fromJsonString, type JsonObject, type MessageInitShape, type Registry, toJson } from '@bufbuild/protobuf';
import { anyPack, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { eventsV1, INTEGRATION_EVENTS, subscriptionEventsV1 } from '@recur/contracts';
import { type SubscribableEventType } from '@recur/vocabulary';
import { newId, type TenantRef, unixSeconds } from '@recur/kernel';

/** An integration event: what one service tells the others (recur.events.v1.InternalEvent). */
export type InternalEvent = eventsV1.InternalEvent;
/** A webhook event exactly as the specification defines it, plus routing (recur.events.v1.PublicEvent). */
export type PublicEvent = eventsV1.PublicEvent;
export type OutboxEvent = InternalEvent | PublicEvent;

/**
 * A new integration event whose payload is one message of a service's events.proto.
 * `id` is assigned here, once: the outbox keeps it, so every redelivery carries it.
 */
export function newInternalEvent<Desc extends DescMessage>(
  tenant: TenantRef,
  aggregateId: string,
  schema: Desc,
  payload: MessageInitShape<Desc>,
  occurredAt: Date,
): InternalEvent {
  return create(eventsV1.InternalEventSchema, {
    id: newId('evt'),
    type: schema.typeName,
    occurredAt: timestampFromDate(occurredAt),
    tenant: { accountId: tenant.accountId, livemode: tenant.livemode },
    aggregateId,
    payload: anyPack(schema, create(schema, payload)),
  });
}

/** The public `data`: `object` is the resource as the REST API shows it. */
export interface PublicEventData {
  object: object;
  previous_attributes?: object;
}

/** A new public webhook event of one of the specification's subscribable types. */
export function newPublicEvent(tenant: TenantRef, type: SubscribableEventType, aggregateId: string, data: PublicEventData, created: Date): PublicEvent {
  return create(eventsV1.PublicEventSchema, {
    id: newId('evt'),
    type,
    created: BigInt(unixSeconds(created)),
    livemode: tenant.livemode,
    // The public shapes are interfaces of JSON values (libs/contracts/src/public); encoding checks them.
    data: data as unknown as JsonObject,
    accountId: tenant.accountId,
    aggregateId,
  });
}

export const isInternalEvent = (event: OutboxEvent): event is InternalEvent => event.$typeName === eventsV1.InternalEventSchema.typeName;

/**
 * The wire format of both envelopes: the proto3 JSON mapping, with the proto's own
 * snake_case field names and every field written (so `livemode: false` is visible).
 * The outbox row stores exactly this JSON and the relay publishes it as is.
 */
export function encodeEvent(event: OutboxEvent): JsonObject {
  const options = { registry: INTEGRATION_EVENTS, useProtoFieldName: true, alwaysEmitImplicit: true };
  return (isInternalEvent(event) ? toJson(eventsV1.InternalEventSchema, event, options) : toJson(eventsV1.PublicEventSchema, event, options)) as JsonObject;
}

/**
 * Decoders of the wire format. Unknown fields are ignored so that a producer may add a
 * field before its consumers know it (the compatible change `buf breaking` allows).
 */
export const decodePublicEvent = (value: string): PublicEvent => fromJsonString(eventsV1.PublicEventSchema, value, { ignoreUnknownFields: true });
export const decodeInternalEvent = (value: string, registry: Registry = INTEGRATION_EVENTS): InternalEvent =>
  fromJsonString(eventsV1.InternalEventSchema, value, { registry, ignoreUnknownFields: true });

/**
 * Each producing service publishes on two topics, never mixed:
 *   `<namespace>.<service>.internal`  InternalEvent, read by other services;
 *   `<namespace>.<service>.public`    PublicEvent, read by webhook-dispatch only;
 * except that customer InternalEvents have a topic of their own (customerEventsTopic).
 * The namespace is KAFKA_TOPIC_PREFIX (default `recur`), so several installations (or
 * test runs) can share one Kafka cluster. Consumer groups carry the same namespace.
 */
export const topicNamespace = (env: NodeJS.ProcessEnv = process.env): string => env.KAFKA_TOPIC_PREFIX || 'recur';
export const internalEventsTopic = (service: string, env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.${service}.internal`;
export const publicEventsTopic = (service: string, env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.${service}.public`;
export const consumerGroup = (service: string, env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.${service}`;

/** What an outbox row records to route it: its producer, the kind of its envelope, and its event type. */
export interface EventRoute {
  producer: string;
  kind: 'internal' | 'public';
  /** The envelope's `type`: `recur.subscription.v1.CustomerCreated`, `customer.created`. */
  type: string;
}

/**
 * Where an event goes. The relay resolves every row's topic from the map it runs with when it
 * publishes the row, not when the row was written, so a topic split (a type moved to a topic of
 * its own) also moves the rows written before it and still unpublished (docs/architecture.md#events).
 */
export type TopicMap = (route: EventRoute, env?: NodeJS.ProcessEnv) => string;

/**
 * The integration topic of customer events (`<namespace>.subscription.customers.internal`), apart
 * from the subscription service's other integration events: a customer create or change is the
 * busiest event the service publishes and no consumer of `subscription.internal` reacts to it, so
 * on that topic every such consumer fetched it only to skip it
 * (docs/performance.md#every-app-its-own-process-with-kafka).
 */
export const customerEventsTopic = (env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.subscription.customers.internal`;

/** The integration event types that go to customerEventsTopic. */
export const CUSTOMER_EVENT_TYPES: ReadonlySet<string> = new Set(
  [subscriptionEventsV1.CustomerCreatedSchema, subscriptionEventsV1.CustomerUpdatedSchema, subscriptionEventsV1.CustomerDeletedSchema].map((schema) => schema.typeName),
);

/**
 * What a consumer of customer integration events subscribes to: their own topic, and the
 * subscription service's, where a release before the split still publishes them (an old replica
 * during a rollout, and its rows: rows without a producer keep their topic). The second is dropped
 * once no release before the split runs (docs/operations/upgrades.md#customer-events-on-a-topic-of-their-own).
 */
export const customerEventsTopics = (env: NodeJS.ProcessEnv = process.env): string[] => [customerEventsTopic(env), internalEventsTopic('subscription', env)];

/**
 * Today's map: every producer's internal events on its internal topic, its public ones on its
 * public topic; customer integration events on their own topic.
 */
export const defaultTopicMap: TopicMap = ({ producer, kind, type }, env = process.env) => {
  if (kind === 'public') return publicEventsTopic(producer, env);
  return producer === 'subscription' && CUSTOMER_EVENT_TYPES.has(type) ? customerEventsTopic(env) : internalEventsTopic(producer, env);
};

/** The routing fields of a public event, as webhook-dispatch's fan-out reads them. */
export interface PublicEventRoute {
  id: string;
  type: string;
  account_id: string;
  livemode: boolean;
}
