import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@recur/local-infra';
import { applyMigrations } from '@recur/persistence';

jest.setTimeout(60_000);

const INIT = '20260101000000_init';
const ADD_STATUS = '20260102000000_add_status';
const MIGRATIONS: Record<string, string> = {
  [INIT]: 'CREATE TABLE "Customer" ("id" TEXT NOT NULL, "email" TEXT NOT NULL, CONSTRAINT "Customer_pkey" PRIMARY KEY ("id"));\n',
  [ADD_STATUS]: 'ALTER TABLE "Customer" ADD COLUMN "status" TEXT NOT NULL DEFAULT \'active\';\nCREATE INDEX "Customer_status_idx" ON "Customer"("status");\n',
};

let workDir: string;
let pg: EmbeddedPostgres;
let databaseCount = 0;

/** A fresh database per test, so tests do not share migration history. */
async function freshDatabase(): Promise<string> {
  const name = `migrate_${++databaseCount}`;
  await pg.ensureDatabase(name);
  return pg.urlFor(name);
}

async function writeMigrations(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(workDir, 'migrations-'));
  await writeFile(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'recur-migrate-spec-'));
  await chmod(workDir, 0o755); // as root, the server runs as 'postgres' and must reach its cluster
  pg = await startEmbeddedPostgres({ dataDir: path.join(workDir, 'pg'), persistent: false });
});

afterAll(async () => {
  await pg?.stop();
  await rm(workDir, { recursive: true, force: true });
});

describe('applyMigrations', () => {
  it('applies pending migrations once and records them like Prisma does', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations(MIGRATIONS);

    expect(await applyMigrations({ databaseUrl, migrationsDir })).toEqual({ applied: [INIT, ADD_STATUS] });
    expect(await applyMigrations({ databaseUrl, migrationsDir })).toEqual({ applied: [] });

    await query(databaseUrl, `INSERT INTO "Customer" (id, email) VALUES ('c1', 'a@example.com')`);
    expect(await query(databaseUrl, 'SELECT id, status FROM "Customer"')).toEqual([{ id: 'c1', status: 'active' }]);

    const history = await query<{ migration_name: string; checksum: string; applied_steps_count: number; finished: boolean }>(
      databaseUrl,
      'SELECT migration_name, checksum, applied_steps_count, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(history).toEqual(
      [INIT, ADD_STATUS].map((name) => ({
        migration_name: name,
        checksum: createHash('sha256').update(MIGRATIONS[name]!).digest('hex'),
        applied_steps_count: 1,
        finished: true,
      })),
    );

    // Exactly Prisma's history table, so `prisma migrate deploy/status` can take over.
    const columns = await query<{ column_name: string; data_type: string; is_nullable: string }>(
      databaseUrl,
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable}`)).toEqual([
      'id character varying NO',
      'checksum character varying NO',
      'finished_at timestamp with time zone YES',
      'migration_name character varying NO',
      'logs text YES',
      'rolled_back_at timestamp with time zone YES',
      'started_at timestamp with time zone NO',
      'applied_steps_count integer NO',
    ]);
  });

  it('applies each migration exactly once when replicas start concurrently', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations(MIGRATIONS);

    const results = await Promise.all([1, 2, 3].map(() => applyMigrations({ databaseUrl, migrationsDir })));

    expect(results.flatMap((r) => r.applied).sort()).toEqual([INIT, ADD_STATUS]);
    expect(await query(databaseUrl, 'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name')).toEqual([
      { migration_name: INIT },
      { migration_name: ADD_STATUS },
    ]);
  });

  it('fails loudly when an applied migration was edited', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations(MIGRATIONS);
    await applyMigrations({ databaseUrl, migrationsDir });

    await writeFile(path.join(migrationsDir, INIT, 'migration.sql'), `${MIGRATIONS[INIT]}-- tweaked\n`);

    await expect(applyMigrations({ databaseUrl, migrationsDir })).rejects.toThrow(
      `Migration ${INIT} was edited after it was applied`,
    );
  });

  it('rolls back a failing migration entirely and records nothing for it', async () => {
    const databaseUrl = await freshDatabase();
    const broken = '20260103000000_broken';
    const migrationsDir = await writeMigrations({
      ...MIGRATIONS,
      [broken]: 'CREATE TABLE "Partial" (id int);\nALTER TABLE "Missing" ADD COLUMN x int;\n',
    });

    await expect(applyMigrations({ databaseUrl, migrationsDir })).rejects.toThrow(`Migration ${broken} failed`);

    expect(await query(databaseUrl, 'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name')).toEqual([
      { migration_name: INIT },
      { migration_name: ADD_STATUS },
    ]);
    expect(await query(databaseUrl, `SELECT to_regclass('"Partial"') AS t`)).toEqual([{ t: null }]);
  });
});

describe('applyMigrations outside a transaction (-- recur:no-transaction)', () => {
  const CONCURRENT_INDEX = '20260104000000_customer_email_index';
  const concurrentIndexSql = (marker: string) =>
    `${marker}\n-- Built without blocking writes to "Customer".\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "Customer_email_idx" ON "Customer"("email");\n\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "Customer_status_email_idx" ON "Customer"("status", "email");\n`;

  it('builds indexes CONCURRENTLY, one statement at a time, and records the migration once', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations({ ...MIGRATIONS, [CONCURRENT_INDEX]: concurrentIndexSql('-- recur:no-transaction') });

    expect(await applyMigrations({ databaseUrl, migrationsDir })).toEqual({ applied: [INIT, ADD_STATUS, CONCURRENT_INDEX] });
    expect(await applyMigrations({ databaseUrl, migrationsDir })).toEqual({ applied: [] });

    const indexes = await query<{ name: string; valid: boolean }>(
      databaseUrl,
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE c.relname IN ('Customer_email_idx', 'Customer_status_email_idx') ORDER BY 1`,
    );
    expect(indexes).toEqual([
      { name: 'Customer_email_idx', valid: true },
      { name: 'Customer_status_email_idx', valid: true },
    ]);
    expect(
      await query(databaseUrl, `SELECT checksum, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE migration_name = '${CONCURRENT_INDEX}'`),
    ).toEqual([{ checksum: createHash('sha256').update(concurrentIndexSql('-- recur:no-transaction')).digest('hex'), finished: true }]);
  });

  it('is needed: without the marker PostgreSQL refuses CREATE INDEX CONCURRENTLY in the migration transaction', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations({ ...MIGRATIONS, [CONCURRENT_INDEX]: concurrentIndexSql('-- no marker') });

    await expect(applyMigrations({ databaseUrl, migrationsDir })).rejects.toThrow('CREATE INDEX CONCURRENTLY cannot run inside a transaction block');
  });

  it('records nothing when a statement fails, names the statement, and runs again once repaired', async () => {
    const databaseUrl = await freshDatabase();
    const broken = `-- recur:no-transaction\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "Customer_email_idx" ON "Customer"("email");\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "Customer_missing_idx" ON "Customer"("missing");\n`;
    const migrationsDir = await writeMigrations({ ...MIGRATIONS, [CONCURRENT_INDEX]: broken });

    await expect(applyMigrations({ databaseUrl, migrationsDir })).rejects.toThrow(
      `Migration ${CONCURRENT_INDEX} failed (run outside a transaction: the statements before this one stay applied; ` +
        'an interrupted CREATE INDEX CONCURRENTLY leaves an INVALID index, which `DROP INDEX CONCURRENTLY` removes) ' +
        'at: CREATE INDEX CONCURRENTLY IF NOT EXISTS "Customer_missing_idx" ON "Customer"("missing"): column "missing" does not exist',
    );
    expect(await query(databaseUrl, `SELECT count(*)::int AS n FROM _prisma_migrations WHERE migration_name = '${CONCURRENT_INDEX}'`)).toEqual([{ n: 0 }]);

    await writeFile(path.join(migrationsDir, CONCURRENT_INDEX, 'migration.sql'), concurrentIndexSql('-- recur:no-transaction'));
    expect(await applyMigrations({ databaseUrl, migrationsDir })).toEqual({ applied: [CONCURRENT_INDEX] });
  });
});

describe('applyMigrations with a corrected migration (-- recur:replaces-checksum)', () => {
  it('accepts the checksum a database recorded for the text the correction declares it replaces, and no other', async () => {
    const databaseUrl = await freshDatabase();
    const migrationsDir = await writeMigrations(MIGRATIONS);
    await applyMigrations({ databaseUrl, migrationsDir });
    const recorded = createHash('sha256').update(MIGRATIONS[ADD_STATUS]!).digest('hex');
    const corrected = `-- recur:replaces-checksum ${recorded}\nALTER TABLE "Customer" ADD COLUMN "status" TEXT NOT NULL DEFAULT 'active';\n`;

    await writeFile(path.join(migrationsDir, ADD_STATUS, 'migration.sql'), corrected);
    const lines: string[] = [];
    expect(await applyMigrations({ databaseUrl, migrationsDir, log: (line) => lines.push(line) })).toEqual({ applied: [] });
    expect(lines).toEqual([`migration ${ADD_STATUS} was recorded under an earlier text that this one declares it replaces`]);

    await writeFile(path.join(migrationsDir, ADD_STATUS, 'migration.sql'), corrected.replace(recorded, 'f'.repeat(64)));
    await expect(applyMigrations({ databaseUrl, migrationsDir })).rejects.toThrow(`Migration ${ADD_STATUS} was edited after it was applied`);
  });
});
