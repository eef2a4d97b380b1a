import { Client } from 'pg';

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
