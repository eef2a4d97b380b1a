import type { EventBus } from './bus';
import { InProcessEventBus } from './in-process-bus';
import { KafkaEventBus } from './kafka-bus';

/**
 * Kafka when KAFKA_BROKERS is set (DESIGN.md, Running it), else an in-process bus of the caller's
 * own, which reaches only the consumers of this process and publishes once the caller opens it.
 */
export function createEventBus(clientId: string, env: NodeJS.ProcessEnv = process.env, log?: (level: string, message: string) => void): EventBus {
  const brokers = env.KAFKA_BROKERS?.split(',').map((broker) => broker.trim()).filter(Boolean) ?? [];
  if (brokers.length === 0) return new InProcessEventBus();
  return new KafkaEventBus({ brokers, clientId, log });
}
