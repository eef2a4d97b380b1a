/** A message on the bus: an event envelope in its wire JSON (event.ts), keyed by aggregate, with trace headers. */
export interface BusMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export type MessageHandler = (message: BusMessage) => Promise<void>;

/** Handles messages of one partition (one key's messages stay in order), all or none: a throw redelivers them all. */
export type BatchHandler = (messages: BusMessage[]) => Promise<void>;

export interface EventBus {
  /** Resolves once every message is durably accepted (Kafka: acknowledged by the broker). */
  publish(messages: BusMessage[]): Promise<void>;
  /**
   * Delivers each message of the topics to the group's handler at least once; a handler
   * that throws gets the message again. Handlers must be idempotent (see inbox.ts).
   */
  subscribe(group: string, topics: string[], handler: MessageHandler): Promise<void>;
  /**
   * As subscribe, handing over up to `BATCH_HANDLER_MAX` messages at a time, so a consumer
   * can record them in one transaction; their offsets are committed only after it resolved.
   */
  subscribeBatch(group: string, topics: string[], handler: BatchHandler): Promise<void>;
  close(): Promise<void>;
}

/** The most messages a BatchHandler gets at once: a transaction's worth, short enough to hold its locks briefly. */
export const BATCH_HANDLER_MAX = 500;
