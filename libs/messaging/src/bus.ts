/** A message on the bus: an event envelope in its wire JSON (event.ts), keyed by aggregate, with trace headers. */
export interface BusMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export type MessageHandler = (message: BusMessage) => Promise<void>;

export interface EventBus {
  /** Resolves once every message is durably accepted (Kafka: acknowledged by the broker). */
  publish(messages: BusMessage[]): Promise<void>;
  /**
   * Delivers each message of the topics to the group's handler at least once; a handler
   * that throws gets the message again. Handlers must be idempotent (see inbox.ts).
   */
  subscribe(group: string, topics: string[], handler: MessageHandler): Promise<void>;
  close(): Promise<void>;
}
