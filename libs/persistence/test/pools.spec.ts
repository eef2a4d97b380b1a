import { createTestDatabase, eventually } from '@recur/testing';
import { Pool } from 'pg';
import { endPool, survivingConnectionLoss } from '../src';

jest.setTimeout(30_000);

let databaseUrl: string;
let admin: Pool;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('pools');
  admin = new Pool({ connectionString: databaseUrl, max: 1 });
});
afterAll(() => admin.end());

/** What PostgreSQL does to every connection when it shuts down (57P01), done to the pool's idle ones only. */
const terminateOthers = () => admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');

it('a pool survives the server dropping its idle connection: it says so and opens another', async () => {
  const lost: string[] = [];
  const pool = survivingConnectionLoss(new Pool({ connectionString: databaseUrl, max: 1 }), (error) => lost.push((error as Error & { code?: string }).code ?? error.message));
  try {
    await pool.query('SELECT 1');
    expect(pool.idleCount).toBe(1);
    await terminateOthers();
    await eventually(async () => lost.length > 0, 5_000, 'the lost connection reported');
    expect(lost).toEqual(['57P01']);
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
  }
});

it('endPool ends a pool once, whoever ended it first', async () => {
  const pool = new Pool({ connectionString: databaseUrl });
  await pool.query('SELECT 1');
  await endPool(pool);
  expect(pool.ended).toBe(true);
  await expect(endPool(pool)).resolves.toBeUndefined();
});
