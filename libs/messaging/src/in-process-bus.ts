import type { BusMessage, EventBus, MessageHandler } from './bus';

interface Subscriber {
  group: string;
  topics: Set<string>;
  handler: MessageHandler;
}

/**
 * The bus of the single-process host (`npm start` without KAFKA_BROKERS). Publishing
 * hands each message to every subscribed group and resolves only when all handled it,
 * so the outbox row is stamped only after consumers took the event; a failure leaves
 * the row unstamped and the relay offers it again (consumers' inboxes drop repeats).
 */
export class InProcessEventBus implements EventBus {
  private readonly subscribers: Subscriber[] = [];

  async publish(messages: BusMessage[]): Promise<void> {
    for (const message of messages) {
      for (const subscriber of this.subscribers) {
        if (subscriber.topics.has(message.topic)) await subscriber.handler(message);
      }
    }
  }

  async subscribe(group: string, topics: string[], handler: MessageHandler): Promise<void> {
    this.subscribers.push({ group, topics: new Set(topics), handler });
  }

  async close(): Promise<void> {
    this.subscribers.length = 0;
  }
}

/** One per process: every app hosted in the process shares it. */
export const inProcessEventBus = new InProcessEventBus();
