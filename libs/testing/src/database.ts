import { Client, Pool } from 'pg';

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
