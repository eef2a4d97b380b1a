import { newId, type TenantRef, unixSeconds } from '@recur/kernel';

/**
 * The integration event every service publishes and webhook-dispatch turns into a
 * delivery. Its public part (id, type, created, livemode, data) is the webhook envelope
 * byte for byte; account_id and aggregate_id route it. `id` is assigned once, in the
 * outbox, so every redelivery and webhook attempt carries the same `evt_…`.
 */
export interface IntegrationEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  account_id: string;
  /** The resource the event is about; the Kafka key, so one resource's events stay ordered. */
  aggregate_id: string;
  data: Data;
}

export function newIntegrationEvent<Data>(
  tenant: TenantRef,
  type: string,
  aggregateId: string,
  data: Data,
  at: Date = new Date(),
): IntegrationEvent<Data> {
  return {
    id: newId('evt'),
    type,
    created: unixSeconds(at),
    livemode: tenant.livemode,
    account_id: tenant.accountId,
    aggregate_id: aggregateId,
    data,
  };
}

/**
 * Each producing service publishes to one topic: `<namespace>.<service>.events`, the
 * namespace being KAFKA_TOPIC_PREFIX (default `recur`), so several installations (or
 * test runs) can share one Kafka cluster. Consumer groups carry the same namespace.
 */
export const topicNamespace = (env: NodeJS.ProcessEnv = process.env): string => env.KAFKA_TOPIC_PREFIX || 'recur';
export const eventsTopic = (service: string, env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.${service}.events`;
export const consumerGroup = (service: string, env: NodeJS.ProcessEnv = process.env): string => `${topicNamespace(env)}.${service}`;
