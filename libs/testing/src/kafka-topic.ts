import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

export interface TopicMessage {
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * Every message a topic holds right now, read from the beginning by a throwaway consumer
 * group: what was published, counted at the broker (a republished event appears twice).
 */
export async function readTopic(brokers: string, topic: string, timeoutMs = 30_000): Promise<TopicMessage[]> {
  const kafka = new Kafka({ clientId: 'recur-test-reader', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const { partition, high } of await admin.fetchTopicOffsets(topic)) ends.set(partition, BigInt(high));
  } finally {
    await admin.disconnect();
  }
  const messages: TopicMessage[] = [];
  const remaining = new Set([...ends].filter(([, high]) => high > 0n).map(([partition]) => partition));
  if (remaining.size === 0) return messages;
  const consumer = kafka.consumer({ groupId: `recur-test-reader-${randomBytes(4).toString('hex')}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) if (value !== undefined) headers[name] = String(Array.isArray(value) ? value[0] : value);
        if (BigInt(message.offset) < ends.get(partition)!) {
          messages.push({ partition, offset: message.offset, key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers });
        }
        if (BigInt(message.offset) + 1n >= ends.get(partition)!) remaining.delete(partition);
        if (remaining.size === 0) done();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`reading ${topic} timed out`)), timeoutMs)))]).finally(() => clearTimeout(timer));
    return messages;
  } finally {
    await consumer.disconnect();
  }
}
