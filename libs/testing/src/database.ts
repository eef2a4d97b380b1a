import { Client, Pool } from 'pg';
import { eventually } from './eventually';

/** Runs one query on a database by URL (for tests that inspect a service's own tables). */
export async function queryDatabase<Row extends Record<string, unknown>>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Row>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** An open connection for tests that must hold something (a lock, a transaction) across steps. */
export async function connectDatabase(databaseUrl: string): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  return client;
}

/**
 * A pool that records the text of every statement its connections send, in order: for tests of
 * where a statement goes (e.g. a NOTIFY after the COMMIT, not inside the transaction).
 */
export function recordingPool(databaseUrl: string, max = 1): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const pool = new Pool({ connectionString: databaseUrl, max });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [text] = args;
      statements.push(typeof text === 'string' ? text : (text as { text?: string }).text ?? '');
      return query(...args);
    };
  });
  return { pool, statements };
}

/**
 * Runs `sql` in a transaction of its own, then waits until every transaction of the cluster that
 * was running when it committed has ended. Only then are the row versions it left dead to every
 * snapshot, so an index scan marks their entries dead as it passes them: tests of that must not
 * depend on what other tests, in other databases of the shared cluster, hold open meanwhile.
 */
export async function commitAndOutliveRunningTransactions(client: Pick<Client, 'query'>, sql: string, timeoutMs = 30_000): Promise<void> {
  await client.query('BEGIN');
  await client.query(sql);
  const { rows } = await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
  await client.query('COMMIT');
  await eventually(
    async () => (await client.query<{ outlived: boolean }>('SELECT pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8 AS outlived', [rows[0].xid])).rows[0].outlived,
    timeoutMs,
    'the transactions running at the commit to end',
  );
}
