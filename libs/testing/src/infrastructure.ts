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
 */
let postgres: Promise<EmbeddedPostgres> | undefined;
let kafka: Promise<KafkaBroker> | undefined;

function ownPostgres(): Promise<EmbeddedPostgres> {
  postgres ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recur-test-pg-'));
    chmodSync(dir, 0o755); // the server runs as the postgres user, which must reach the folder
    return startEmbeddedPostgres({ dataDir: join(dir, 'data'), persistent: false });
  })();
  return postgres;
}

async function adminUrl(): Promise<string> {
  return process.env.RECUR_TEST_PG_ADMIN_URL ?? (await ownPostgres()).adminUrl;
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
  kafka ??= startKafkaBroker();
  return (await kafka).brokers;
}

/** Stops what this process started itself (call from afterAll of the last suite, or let exit do it). */
export async function stopOwnInfrastructure(): Promise<void> {
  await Promise.all([
    postgres?.then((pg) => pg.stop()),
    kafka?.then((broker) => broker.stop()),
  ]);
  postgres = undefined;
  kafka = undefined;
}
