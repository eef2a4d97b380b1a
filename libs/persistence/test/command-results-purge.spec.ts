import { createTestDatabase, eventually, sleep } from '@recur/testing';
import { Pool } from 'pg';
import { applyMigrations, COMMAND_RESULTS_RETENTION_MS, CommandResultsPurge, PERSISTENCE_MIGRATIONS } from '../src';

jest.setTimeout(30_000);

const NOW = new Date('2031-05-10T12:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;

let databaseUrl: string;
let pool: Pool;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('purge');
  pool = new Pool({ connectionString: databaseUrl });
  // The table from the library's own migrations, as every service's database gets it.
  await applyMigrations({ databaseUrl, migrationsDir: PERSISTENCE_MIGRATIONS.migrationsDir });
});
afterAll(() => pool.end());

const answer = (requestId: string, createdAt: Date) =>
  pool.query(`INSERT INTO command_results (account_id, livemode, rpc, request_id, created_at) VALUES ('acct_1', false, 'recur.test.v1.Do', $1, $2)`, [requestId, createdAt]);
const requestIds = async () => (await pool.query<{ request_id: string }>('SELECT request_id FROM command_results ORDER BY request_id')).rows.map((row) => row.request_id);

describe('CommandResultsPurge', () => {
  it('keeps answers for 7 days, a retry window no caller comes near', () => {
    expect(COMMAND_RESULTS_RETENTION_MS).toBe(7 * DAY_MS);
  });

  it('deletes the answers older than the retention, in batches, and keeps the younger ones', async () => {
    const expired = Array.from({ length: 2_500 }, (_, index) => `req_old_${String(index).padStart(4, '0')}`);
    await pool.query(
      `INSERT INTO command_results (account_id, livemode, rpc, request_id, created_at)
       SELECT 'acct_1', false, 'recur.test.v1.Do', id, $2 FROM unnest($1::text[]) AS id`,
      [expired, new Date(NOW.getTime() - 7 * DAY_MS - 1)],
    );
    await answer('req_young', new Date(NOW.getTime() - 7 * DAY_MS + 60_000));
    await answer('req_today', NOW);
    const purge = new CommandResultsPurge({ databaseUrl, clock: () => NOW, pollMs: 50 });
    await purge.start();
    try {
      await eventually(async () => (await requestIds()).length === 2, 10_000, 'the expired answers deleted');
      expect(await requestIds()).toEqual(['req_today', 'req_young']);
      // Younger answers stay however often it looks.
      await sleep(300);
      expect(await requestIds()).toEqual(['req_today', 'req_young']);
    } finally {
      await purge.stop();
    }
  });

  it('deletes an answer once it expires while running', async () => {
    await pool.query('TRUNCATE command_results');
    let now = NOW;
    await answer('req_ageing', NOW);
    const purge = new CommandResultsPurge({ databaseUrl, clock: () => now, pollMs: 50 });
    await purge.start();
    try {
      await sleep(200);
      expect(await requestIds()).toEqual(['req_ageing']);
      now = new Date(NOW.getTime() + 7 * DAY_MS + 1);
      await eventually(async () => (await requestIds()).length === 0, 10_000, 'the answer deleted once expired');
    } finally {
      await purge.stop();
    }
  });
});
