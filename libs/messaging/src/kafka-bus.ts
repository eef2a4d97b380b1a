import { type Consumer, type ConsumerRunConfig, Kafka, type KafkaMessage, logLevel, type Producer } from 'kafkajs';
import { BATCH_HANDLER_MAX, type BatchHandler, type BusMessage, type EventBus, type MessageHandler } from './bus';
// Before any kafkajs client exists: stops its idle connections' 1 ms timer loop.
import './kafkajs-idle-timer';

/** Retries a start-up step that depends on a broker that may still be busy (about a minute in all). */
async function retrying<T>(step: () => Promise<T>, onError: (error: Error, attempt: number) => void, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= attempts) throw error;
      onError(error as Error, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** (attempt - 1), 15_000)));
    }
  }
}

/** Partitions of each events topic: the parallelism of one consumer group. */
const TOPIC_PARTITIONS = 3;

/**
 * How often a batch consumer commits its offsets at most (kafkajs committed after every fetched
 * batch: at a request's rate, one offset commit per event and group, the broker's largest cost,
 * docs/performance.md#every-app-its-own-process-with-kafka). Offsets still follow the handlers:
 * a crash re-delivers at most this long's events, which the consumers' inboxes drop.
 */
export const OFFSET_COMMIT_INTERVAL_MS = 1_000;

/** A batch consumer's offsets not yet committed: the commit that writes them, and the timer that will. */
interface PendingCommit {
  commit?: () => Promise<void>;
  timer?: NodeJS.Timeout;
}

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  log?: (level: string, message: string) => void;
}

/**
 * Kafka through kafkajs. The producer is idempotent and waits for all in-sync replicas;
 * consumers commit an offset only after the handler resolved, so a crash re-delivers.
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private producer?: Producer;
  private readonly consumers: Consumer[] = [];
  private readonly pendingCommits: PendingCommit[] = [];
  /** Topics this process created or found (ensureTopics), so publish creates each once. */
  private readonly topicsEnsured = new Set<string>();

  constructor(private readonly options: KafkaBusOptions) {
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: logLevel.WARN,
      logCreator: () => ({ level, log }) => options.log?.(logLevel[level] ?? String(level), `${log.message}`),
      retry: { retries: 8, initialRetryTime: 200 },
    });
  }

  private async connectedProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
      await producer.connect();
      this.producer = producer;
    }
    return this.producer;
  }

  async publish(messages: BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = await this.connectedProducer();
    const byTopic = new Map<string, BusMessage[]>();
    for (const message of messages) byTopic.set(message.topic, [...(byTopic.get(message.topic) ?? []), message]);
    // A topic no consumer has created yet (customer events' own topic may have none) is created
    // with TOPIC_PARTITIONS, once per process: the broker's auto-creation would give it its default
    // partitions (one here), and a broker with auto-creation off would refuse the produce.
    const unseen = [...byTopic.keys()].filter((topic) => !this.topicsEnsured.has(topic));
    if (unseen.length > 0) await this.ensureTopics(unseen);
    await producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, batch]) => ({
        topic,
        messages: batch.map(({ key, value, headers }) => ({ key, value, headers })),
      })),
    });
  }

  /**
   * Creates the topics if missing. Leaders are not awaited here: a broker under load can
   * take a while to elect them, and the consumer's own metadata retries cover that.
   */
  async ensureTopics(topics: string[]): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ waitForLeaders: false, timeout: 30_000, topics: topics.map((topic) => ({ topic, numPartitions: TOPIC_PARTITIONS })) });
      for (const topic of topics) this.topicsEnsured.add(topic);
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Message by message, each offset resolved once its handler resolved (a throw redelivers from
   * that message on), committed as subscribeBatch commits: at most every OFFSET_COMMIT_INTERVAL_MS.
   * (kafkajs's eachMessage committed after every fetched batch: one offset commit per event and group.)
   */
  async subscribe(group: string, topics: string[], handler: MessageHandler): Promise<void> {
    await this.consumeInChunks(group, topics, 1, ([message]) => handler(message));
  }

  async subscribeBatch(group: string, topics: string[], handler: BatchHandler): Promise<void> {
    await this.consumeInChunks(group, topics, BATCH_HANDLER_MAX, handler);
  }

  /**
   * Hands each fetched batch to `handler` `chunkSize` messages at a time, in order, and resolves a
   * chunk's offsets only after its handler resolved; they are committed at most every
   * OFFSET_COMMIT_INTERVAL_MS, and what the last batch of a stream left by a timer or by close().
   */
  private async consumeInChunks(group: string, topics: string[], chunkSize: number, handler: BatchHandler): Promise<void> {
    const pending: PendingCommit = {};
    this.pendingCommits.push(pending);
    await this.run(group, topics, {
      // Offsets are resolved here, chunk by chunk, each only after its handler resolved, and
      // committed at most every OFFSET_COMMIT_INTERVAL_MS (kafkajs's autoCommit commits after every batch).
      eachBatchAutoResolve: false,
      autoCommit: false,
      autoCommitInterval: OFFSET_COMMIT_INTERVAL_MS,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets, isRunning, isStale }) => {
        for (let start = 0; start < batch.messages.length; start += chunkSize) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(start, start + chunkSize);
          await handler(chunk.map((message) => busMessage(batch.topic, message)));
          resolveOffset(chunk[chunk.length - 1].offset);
          // Commits every resolved offset of the group once the interval has passed since the last commit.
          await commitOffsetsIfNecessary();
          await heartbeat();
        }
        // What this batch left uncommitted is committed by the next batch past the interval, or by this timer when none comes.
        pending.commit = () => commitOffsetsIfNecessary(uncommittedOffsets());
        if (!pending.timer && uncommittedOffsets().topics.length > 0) {
          pending.timer = setTimeout(() => {
            pending.timer = undefined;
            pending.commit?.().catch((error: Error) => this.options.log?.('WARN', `committing offsets of ${group} failed (they are committed with the next batch): ${error.message}`));
          }, OFFSET_COMMIT_INTERVAL_MS);
          pending.timer.unref();
        }
      },
    });
  }

  /** A consumer of the group on the topics, its partitions handled in parallel, started without waiting for the join. */
  private async run(group: string, topics: string[], handlers: Pick<ConsumerRunConfig, 'eachBatch' | 'eachBatchAutoResolve' | 'autoCommit' | 'autoCommitInterval'>): Promise<void> {
    await retrying(() => this.ensureTopics(topics), (error, attempt) => this.options.log?.('WARN', `creating topics failed (attempt ${attempt}): ${error.message}`));
    // A 10 s session (kafkajs default: 30 s) lets a restarted replica take over a crashed
    // one's partitions quickly.
    const consumer = this.kafka.consumer({ groupId: group, allowAutoTopicCreation: true, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
    this.consumers.push(consumer);
    await consumer.connect();
    // A topic created a moment ago may have no leader yet ("does not host this topic-partition").
    await retrying(() => consumer.subscribe({ topics, fromBeginning: true }), (error, attempt) => this.options.log?.('WARN', `subscribing failed (attempt ${attempt}): ${error.message}`));
    // Not awaited: joining the group waits for a crashed predecessor's session to expire (10 s),
    // and a service must answer its gRPC callers meanwhile (the gateway's deadline is 10 s);
    // events wait in Kafka until the join completes. kafkajs restarts a crashed run by itself.
    void consumer.run({
      // Partitions are handled in parallel; within one, messages (one resource's events) stay in order.
      partitionsConsumedConcurrently: TOPIC_PARTITIONS,
      ...handlers,
    }).catch((error: Error) => this.options.log?.('ERROR', `consumer ${group} stopped: ${error.message}`));
  }

  async close(): Promise<void> {
    // The offsets handled since the last commit, so a graceful stop re-delivers nothing.
    await Promise.all(this.pendingCommits.map(async (pending) => {
      clearTimeout(pending.timer);
      await pending.commit?.().catch(() => undefined);
    }));
    await Promise.all(this.consumers.map((consumer) => consumer.disconnect()));
    await this.producer?.disconnect();
  }
}

function busMessage(topic: string, message: KafkaMessage): BusMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
  }
  return { topic, key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers };
}
