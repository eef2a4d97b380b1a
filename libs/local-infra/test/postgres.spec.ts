import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { embeddedPostgresUrl, startEmbeddedPostgres } from '@recur/local-infra';

jest.setTimeout(60_000);

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Command lines of live postgres processes serving this data directory. */
function postgresProcessesFor(dataDir: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('/bin/postgres') && line.includes(dataDir));
}

describe('startEmbeddedPostgres', () => {
  let dataDir: string;

  beforeAll(async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'recur-pg-spec-'));
    await chmod(root, 0o755); // as root, the server runs as 'postgres' and must reach the cluster
    dataDir = path.join(root, 'cluster');
  });

  afterAll(async () => {
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  it('creates databases idempotently and keeps data across restarts on the same dataDir', async () => {
    const first = await startEmbeddedPostgres({ dataDir });
    try {
      // Clients connect through the cluster's Unix socket, in its own folder.
      expect(first.adminUrl).toBe(`postgresql://postgres:postgres@127.0.0.1:${first.port}/postgres?host=${encodeURIComponent(dataDir)}`);
      expect(await query<{ address: string | null }>(first.adminUrl, 'SELECT inet_server_addr() AS address')).toEqual([{ address: null }]);
      await first.ensureDatabase('billing');
      await first.ensureDatabase('billing');
      // Concurrent callers must not trip over each other either.
      await Promise.all([first.ensureDatabase('ledger'), first.ensureDatabase('ledger'), first.ensureDatabase('ledger')]);

      const databases = await query<{ datname: string }>(first.adminUrl, 'SELECT datname FROM pg_database ORDER BY datname');
      expect(databases.map((d) => d.datname)).toEqual(expect.arrayContaining(['billing', 'ledger']));

      await query(first.urlFor('billing'), 'CREATE TABLE invoice (id int PRIMARY KEY, total numeric NOT NULL)');
      await query(first.urlFor('billing'), 'INSERT INTO invoice VALUES (1, 10.50), (2, 99.00)');
    } finally {
      await first.stop();
    }
    expect(postgresProcessesFor(dataDir)).toEqual([]);

    const second = await startEmbeddedPostgres({ dataDir });
    try {
      await second.ensureDatabase('billing');
      const rows = await query<{ id: number; total: string }>(second.urlFor('billing'), 'SELECT id, total FROM invoice ORDER BY id');
      expect(rows).toEqual([
        { id: 1, total: '10.50' },
        { id: 2, total: '99.00' },
      ]);
    } finally {
      await second.stop();
    }
    expect(postgresProcessesFor(dataDir)).toEqual([]);
  });

  it('deletes the data directory on stop when not persistent', async () => {
    const scratch = path.join(path.dirname(dataDir), 'scratch');
    const pg = await startEmbeddedPostgres({ dataDir: scratch, persistent: false });
    await pg.stop();
    await pg.stop(); // idempotent
    expect(postgresProcessesFor(scratch)).toEqual([]);
    await expect(query(pg.adminUrl, 'SELECT 1')).rejects.toThrow();
    expect(existsSync(scratch)).toBe(false);
  });
  it('runs a kept cluster durably and only a throwaway one without crash safety', async () => {
    const settingsOf = async (url: string) =>
      Object.fromEntries(
        (await query<{ name: string; setting: string }>(url, "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'full_page_writes', 'synchronous_commit')")).map(
          (row) => [row.name, row.setting],
        ),
      );
    const kept = await startEmbeddedPostgres({ dataDir: `${dataDir}-kept` });
    try {
      expect(await settingsOf(kept.adminUrl)).toEqual({ fsync: 'on', full_page_writes: 'on', synchronous_commit: 'on' });
    } finally {
      await kept.stop();
    }
    const throwaway = await startEmbeddedPostgres({ dataDir: `${dataDir}-throwaway`, persistent: false });
    try {
      expect(await settingsOf(throwaway.adminUrl)).toEqual({ fsync: 'off', full_page_writes: 'off', synchronous_commit: 'off' });
    } finally {
      await throwaway.stop();
    }
  });

  it('names TCP loopback alone where the socket path would not fit a Unix address', () => {
    const deep = path.join(tmpdir(), 'x'.repeat(100), 'cluster');
    expect(embeddedPostgresUrl(deep, 5432, 'billing')).toBe('postgresql://postgres:postgres@127.0.0.1:5432/billing');
    expect(embeddedPostgresUrl('/tmp/c', 5432, 'billing')).toBe('postgresql://postgres:postgres@127.0.0.1:5432/billing?host=%2Ftmp%2Fc');
  });
});
