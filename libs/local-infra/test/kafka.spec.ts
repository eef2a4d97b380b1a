import { connect } from 'node:net';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startKafkaBroker, type KafkaBroker } from '../src/kafka';

// The first run on a machine resolves ~46 MB of jars through Maven before the JVM starts.
jest.setTimeout(180_000);

describe('startKafkaBroker', () => {
  let broker: KafkaBroker | undefined;

  afterAll(async () => {
    await broker?.stop();
  });

  it('runs a real broker that round-trips messages through a consumer group, then stops', async () => {
    broker = await startKafkaBroker();
    const { brokers } = broker;
    expect(brokers).toMatch(/^127\.0\.0\.1:\d+$/);

    const kafka = new Kafka({ clientId: 'local-infra-test', brokers: [brokers], logLevel: logLevel.WARN });
    const topic = `local-infra-test-${Date.now()}`;

    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic }], waitForLeaders: true })).toBe(true);
    } finally {
      await admin.disconnect();
    }

    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      await producer.send({
        topic,
        messages: [{ value: 'invoice-1' }, { value: 'invoice-2' }, { value: 'invoice-3' }],
      });
    } finally {
      await producer.disconnect();
    }

    const consumer = kafka.consumer({ groupId: `${topic}-group` });
    const received: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`received only ${JSON.stringify(received)}`)),
          60_000,
        );
        consumer
          .run({
            eachMessage: async ({ message }) => {
              received.push(message.value?.toString() ?? '');
              if (received.length === 3) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    expect(received).toEqual(['invoice-1', 'invoice-2', 'invoice-3']);

    await broker.stop();
    const port = Number(brokers.split(':')[1]);
    await expect(canConnect(port)).resolves.toBe(false);
  });
});

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
