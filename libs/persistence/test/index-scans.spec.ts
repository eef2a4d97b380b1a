import { claimDueRowsSql, claimParams, type DueRowsTable } from '@recur/jobs';
import { commitAndOutliveRunningTransactions, createTestDatabase } from '@recur/testing';
import { Pool } from 'pg';
import { claimDueRows, queryByIndexScans, withLiterals } from '../src';

/**
 * Claims of due rows on a table whose rows were done since its last vacuum, as a job table is
 * between two autovacuums: planned as an index scan, each dead index entry is read once (and
 * marked), not on every claim.
 */
jest.setTimeout(60_000);

const JOBS: DueRowsTable = { table: 'jobs', dueAt: 'due_at', leaseUntil: 'lease_until', pending: "status = 'pending'" };
const CLAIM = `WITH ${claimDueRowsSql(JOBS)} SELECT id FROM claimed ORDER BY id`;
const NOW = new Date('2026-11-27T00:00:00Z');

let pool: Pool;

beforeAll(async () => {
  // One connection: every statement below runs on the connection the claims left behind.
  pool = new Pool({ connectionString: await createTestDatabase('index_scans'), max: 1 });
  await pool.query(`CREATE TABLE jobs (id int PRIMARY KEY, status text NOT NULL, due_at timestamptz, lease_until timestamptz) WITH (autovacuum_enabled = false)`);
  await pool.query('CREATE INDEX jobs_status_due_at_idx ON jobs (status, due_at)');
  await pool.query(`INSERT INTO jobs SELECT n, 'pending', $1::timestamptz - make_interval(secs => 10000 - n), NULL FROM generate_series(1, 5010) AS n`, [NOW]);
  // Statistics taken under load, with a backlog of 310, then all but the last 10 rows done.
  await pool.query(`UPDATE jobs SET status = 'done', due_at = NULL WHERE id <= 4700`);
  await pool.query('ANALYZE jobs');
  const client = await pool.connect();
  try {
    await commitAndOutliveRunningTransactions(client, `UPDATE jobs SET status = 'done', due_at = NULL WHERE id <= 5000 AND status = 'pending'`);
  } finally {
    client.release();
  }
});
afterAll(() => pool?.end());

/** Index entries read in this session so far (its statistics, flushed first). */
async function entriesRead(): Promise<number> {
  await pool.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await pool.query<{ read: string }>("SELECT idx_tup_read AS read FROM pg_stat_user_indexes WHERE indexrelname = 'jobs_status_due_at_idx'");
  return Number(rows[0].read);
}

describe('queryByIndexScans and the claims of due rows (claimDueRows)', () => {
  it('writes each placeholder as its literal, $10 apart from $1, and refuses a placeholder without a value', () => {
    const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, "it's"];
    expect(withLiterals('SELECT $1, $10::text, $2', values)).toBe("SELECT 1, 'it''s'::text, 2");
    expect(withLiterals('SELECT $1', [NOW])).toBe("SELECT '2026-11-27T00:00:00.000Z'::timestamptz");
    expect(() => withLiterals('SELECT $1, $2', [1])).toThrow('no value for $2');
  });

  it('plans the claim as an index scan in due order, where the planner alone picks a bitmap or a sequential scan', async () => {
    const plain = JSON.stringify((await pool.query(`EXPLAIN (FORMAT JSON) ${withLiterals(CLAIM, claimParams(NOW, 30_000, 100))}`)).rows);
    expect(plain).toMatch(/Bitmap Heap Scan|Seq Scan/);
    const planned = JSON.stringify(await queryByIndexScans(pool, `EXPLAIN (FORMAT JSON) ${CLAIM}`, claimParams(NOW, 30_000, 100)));
    expect(planned).toContain('"Node Type":"Index Scan"');
    expect(planned).not.toMatch(/Bitmap|Seq Scan/);
  });

  it('reads the dead index entries once, not on every claim, and claims what is due', async () => {
    const claimDueJobs = claimDueRows<{ id: number }>(pool, JOBS, 'SELECT id FROM claimed ORDER BY id');
    const claim = async (at: Date) => {
      const before = await entriesRead();
      const rows = await claimDueJobs(100, at, 30_000);
      return { ids: rows.map((row) => row.id), entries: (await entriesRead()) - before };
    };
    const first = await claim(NOW);
    expect({ ids: first.ids, passedTheDead: first.entries >= 5_000 }).toEqual({ ids: [5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009, 5010], passedTheDead: true });
    // The leases hold: a second claim finds nothing due, and passes only the leased rows' entries
    // (their lease's new versions and the old ones it left), not the 5 000.
    const second = await claim(NOW);
    expect(second.ids).toEqual([]);
    expect(second.entries).toBeLessThanOrEqual(20);
  });

  it('rolls back a statement that failed, leaving its connection usable', async () => {
    await expect(queryByIndexScans(pool, 'SELECT 1 / $1::int', [0])).rejects.toThrow('division by zero');
    expect((await pool.query<{ status: string }>('SELECT 1 AS status')).rows).toEqual([{ status: 1 }]);
  });
});

describe('a connection lost during a claim', () => {
  it('fails the claim, and does not end the process with an unhandled error event of the client', async () => {
    // A claim's connection reset by the network or terminated by the server (a failover, kill -9 of
    // PostgreSQL): with no listener on the checked-out client, pg's 'error' event ended the whole
    // service (npm run bench:faults, subscription→PostgreSQL resets); Jest fails a test on it too.
    const claims = new Pool({ connectionString: pool.options.connectionString, max: 1 });
    claims.on('error', () => undefined);
    try {
      const claim = queryByIndexScans(claims, 'SELECT pg_sleep(30) AS slept', []);
      let terminated = false;
      for (let tries = 0; !terminated && tries < 200; tries++) {
        const { rows } = await pool.query<{ done: boolean }>(
          "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
        );
        terminated = rows.some((row) => row.done);
        if (!terminated) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(terminated).toBe(true);
      await expect(claim).rejects.toThrow(/terminat/i);
      // Let the client's end events fire: the failure was here, once the query had already failed.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await claims.end();
    }
  });
});
