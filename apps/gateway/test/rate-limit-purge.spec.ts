import { join } from 'node:path';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase, eventually } from '@recur/testing';
import { Pool } from 'pg';
import type { GatewayConfig } from '../src/config';
import type { PrismaService } from '../src/infrastructure/prisma.service';
import { RATE_LIMIT_ENDED_WINDOW_KEPT_SECONDS, RateLimiter } from '../src/rate-limits/rate-limiter';

/**
 * The shared window rows (`rate_limit_windows`) on a real database, with time passed in: rows of
 * windows that ended a minute ago or more are deleted, newer ones stay, and a key whose row was
 * deleted is counted afresh from its next request.
 */
let pool: Pool;
let limiter: RateLimiter;
const T = 1_800_000_000_000;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('gateway_rate_limit_purge');
  await applyMigrations({ databaseUrl, migrationsDir: join(__dirname, '..', 'prisma', 'migrations') });
  pool = new Pool({ connectionString: databaseUrl, max: 2 });
  // Run alone, the test's own PostgreSQL stops at teardown and ends the idle clients: not a failure of the purge.
  pool.on('error', () => undefined);
  const config = { rateLimits: { livePerSecond: 100, sandboxPerSecond: 25 } } as GatewayConfig;
  limiter = new RateLimiter({ pool } as unknown as PrismaService, config, () => new Date(T));
}, 60_000);

afterAll(async () => {
  limiter?.onModuleDestroy();
  await pool?.end();
});

const rows = async () => (await pool.query<{ key_id: string; window_start: string; taken: number }>('SELECT key_id, window_start, taken FROM rate_limit_windows ORDER BY key_id')).rows;

/** One admission of `keyId` at `atMs`, once its flush (the window's first: at once) reached the table. */
async function admitted(keyId: string, atMs: number): Promise<void> {
  expect(await limiter.take(keyId, 'read', 100, atMs)).toMatchObject({ allowed: true });
  await eventually(async () => (await rows()).some((row) => row.key_id === keyId && Number(row.window_start) === Math.floor(atMs / 1000)), 5_000, `${keyId}'s row`);
}

it('deletes the rows of windows that ended a minute ago or more, keeps the others, and counts a purged key afresh', async () => {
  // The window of T ended at T + 1 s: `now` is a minute after that.
  const now = T + (1 + RATE_LIMIT_ENDED_WINDOW_KEPT_SECONDS) * 1000;
  await admitted('key_idle', T);
  await admitted('key_just_kept', T + 1000);
  await admitted('key_busy', now);
  expect(await limiter.purgeEndedWindows(now)).toBe(1);
  expect((await rows()).map((row) => row.key_id)).toEqual(['key_busy', 'key_just_kept']);
  await admitted('key_idle', now);
  expect((await rows()).find((row) => row.key_id === 'key_idle')).toMatchObject({ window_start: String(now / 1000), taken: 1 });
  expect(await limiter.purgeEndedWindows(now)).toBe(0);
});
