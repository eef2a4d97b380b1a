import { BATCH_HANDLER_MAX, type BatchHandler, type BusMessage, type EventBus, type MessageHandler } from './bus';

interface Subscriber {
  group: string;
  topics: Set<string>;
  handler: BatchHandler;
}

/** Where the bus is in its life: see InProcessEventBus. */
type BusState = 'opening' | 'open' | 'closed';

/**
 * The bus of a process that hosts its apps without Kafka (`npm start` without KAFKA_BROKERS, or
 * one app run alone). Publishing hands each message to every subscribed group and resolves only
 * when all handled it (their inboxes committed), so the outbox row is stamped only after every
 * consumer took the event; a failure leaves the row unstamped and the relay offers it again
 * (consumers' inboxes drop repeats).
 *
 * Kafka keeps a message for a group that subscribes later; this bus keeps nothing. So a message may
 * only be taken as published once every group that will ever read it has handled it, and only the
 * host knows when its apps have all subscribed: apps start one after another, and a producer's
 * relay publishes its backlog as soon as its app is up (after a kill -9, the events of requests
 * already acknowledged). Hence three states:
 * - opening (from construction): publish() waits; subscribing is allowed.
 * - open (the host called open() once every app it hosts has started, and so subscribed): the
 *   groups are fixed. Waiting publishes go out; a group that subscribes now is refused (it would
 *   have missed what was published before it).
 * - closed (close()): publishes waiting or to come fail, so their rows stay in the outbox for the
 *   next start; deliveries in flight finish.
 * A message of a topic no group reads is dropped, as no consumer would ever read it from Kafka.
 */
export class InProcessEventBus implements EventBus {
  private readonly subscribers: Subscriber[] = [];
  private state: BusState = 'opening';
  private readonly opened: Promise<void>;
  private settleOpening!: { open(): void; close(error: Error): void };

  constructor() {
    this.opened = new Promise<void>((resolve, reject) => (this.settleOpening = { open: resolve, close: reject }));
    // A bus closed before it opened may have no publish waiting: nothing else observes the rejection.
    this.opened.catch(() => undefined);
  }

  /** The host's word that every app it hosts has subscribed: publishing starts, and no new group may join. */
  open(): void {
    if (this.state !== 'opening') throw new Error(`the in-process bus cannot open: it is ${this.state}`);
    this.state = 'open';
    this.settleOpening.open();
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  async publish(messages: BusMessage[]): Promise<void> {
    if (this.state === 'opening') await this.opened;
    if (this.state === 'closed') throw new Error('the in-process bus is closed: the rows stay in the outbox for the next start');
    for (const subscriber of [...this.subscribers]) {
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
    if (this.state !== 'opening') throw new Error(`consumer group ${group} subscribed to the in-process bus after it was ${this.state}: it would miss events already published`);
    this.subscribers.push({ group, topics: new Set(topics), handler });
  }

  async close(): Promise<void> {
    if (this.state === 'opening') this.settleOpening.close(new Error('the in-process bus closed before it opened: the rows stay in the outbox for the next start'));
    this.state = 'closed';
    this.subscribers.length = 0;
  }
}

/** The bus `npm start` shares among the apps it hosts (tools/start.mjs opens it once all have started). */
export const inProcessEventBus = new InProcessEventBus();
