import { BATCH_HANDLER_MAX, type BatchHandler, type BusMessage, type EventBus, type MessageHandler } from './bus';

interface Subscriber {
  group: string;
  topics: Set<string>;
  handler: BatchHandler;
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
    for (const subscriber of this.subscribers) {
      const theirs = messages.filter((message) => subscriber.topics.has(message.topic));
      for (let start = 0; start < theirs.length; start += BATCH_HANDLER_MAX) await subscriber.handler(theirs.slice(start, start + BATCH_HANDLER_MAX));
    }
  }

  async subscribe(group: string, topics: string[], handler: MessageHandler): Promise<void> {
    await this.subscribeBatch(group, topics, async (messages) => {
      for (const message of messages) await handler(message);
    });
  }

  async subscribeBatch(group: string, topics: string[], handler: BatchHandler): Promise<void> {
    this.subscribers.push({ group, topics: new Set(topics), handler });
  }

  async close(): Promise<void> {
    this.subscribers.length = 0;
  }
}

/** One per process: every app hosted in the process shares it. */
export const inProcessEventBus = new InProcessEventBus();
