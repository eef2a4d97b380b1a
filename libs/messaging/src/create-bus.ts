import type { EventBus } from './bus';
import { inProcessEventBus } from './in-process-bus';
import { KafkaEventBus } from './kafka-bus';

/** Kafka when KAFKA_BROKERS is set, else the process's in-process bus (DESIGN.md, Running it). */
export function createEventBus(clientId: string, env: NodeJS.ProcessEnv = process.env, log?: (level: string, message: string) => void): EventBus {
  const brokers = env.KAFKA_BROKERS?.split(',').map((broker) => broker.trim()).filter(Boolean) ?? [];
  if (brokers.length === 0) return inProcessEventBus;
  return new KafkaEventBus({ brokers, clientId, log });
}
