import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';

export interface ApplyMigrationsOptions {
  databaseUrl: string;
  /** A Prisma migrations folder: `<timestamp>_<name>/migration.sql` and `migration_lock.toml`. */
  migrationsDir: string;
  log?: (line: string) => void;
}

export interface ApplyMigrationsResult {
  /** Names of the migrations this call applied, in order (empty when up to date). */
  applied: string[];
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/** The key `prisma migrate deploy` locks, so it and this runner exclude each other. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

/** Prisma's own DDL for its history table (schema engine, PostgreSQL connector): its bookkeeping keeps the database's time. */
// eslint-disable-next-line no-restricted-syntax -- Prisma's DDL, verbatim
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies the unapplied migrations of a Prisma-format folder, each in its own transaction together
 * with its `_prisma_migrations` row, under Prisma Migrate's advisory lock: replicas starting at
 * once apply each migration exactly once, and the history stays readable by `prisma migrate`.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<ApplyMigrationsResult> {
  const log = options.log ?? (() => undefined);
  const migrations = await readMigrations(options.migrationsDir);

  // One session throughout: the advisory lock belongs to it.
  const client = new Client({ connectionString: options.databaseUrl });
  client.on('error', (error) => log(`migration connection error: ${error.message}`));
  await client.connect();
  try {
    const { rows: locked } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [PRISMA_MIGRATE_LOCK_KEY]);
    if (!locked[0]?.ok) {
      log('waiting for the migration lock held by another process');
      await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]);
    }
    await client.query(CREATE_MIGRATIONS_TABLE);

    // Rolled-back rows do not count as applied (Prisma re-applies those too).
    const { rows } = await client.query<MigrationRow>(
      'SELECT migration_name, checksum, finished_at FROM _prisma_migrations WHERE rolled_back_at IS NULL ORDER BY started_at',
    );
    const recorded = new Map(rows.map((row) => [row.migration_name, row]));
    checkHistory(migrations, recorded, log);

    const applied: string[] = [];
    for (const migration of migrations) {
      if (recorded.has(migration.name)) continue;
      const started = performance.now();
      await applyOne(client, migration);
      applied.push(migration.name);
      log(`applied migration ${migration.name} (${Math.round(performance.now() - started)} ms)`);
    }
    return { applied };
  } finally {
    // Ending the session releases the advisory lock even if unlocking was skipped by an error.
    await client.end();
  }
}

async function applyOne(client: Client, migration: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    const id = randomUUID();
    await client.query(
      'INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, clock_timestamp())',
      [id, migration.checksum, migration.name],
    );
    // No parameters: simple-query protocol, so the file may hold many statements.
    await client.query(migration.sql);
    await client.query(
      'UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1',
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, { cause: error });
  }
}

function checkHistory(files: MigrationFile[], recorded: Map<string, MigrationRow>, log: (l: string) => void): void {
  const byName = new Map(files.map((file) => [file.name, file]));
  for (const row of recorded.values()) {
    if (row.finished_at === null) {
      // Left by a failed `prisma migrate deploy` (ours rolls back instead): needs a human.
      throw new Error(
        `Migration ${row.migration_name} failed earlier and is still recorded as started; ` +
          `repair the database, then run \`prisma migrate resolve\` (or delete its _prisma_migrations row).`,
      );
    }
    const file = byName.get(row.migration_name);
    if (!file) {
      // Normal during a rolling deploy: a newer replica already applied a newer migration.
      log(`database has migration ${row.migration_name}, which is not in this build's migrations folder`);
    } else if (!checksumMatches(file.sql, row.checksum)) {
      throw new Error(
        `Migration ${row.migration_name} was edited after it was applied: ` +
          `its file's checksum ${file.checksum} differs from the recorded ${row.checksum}. ` +
          'Restore the file and put the change in a new migration.',
      );
    }
  }
}

/** Like Prisma, tolerate line-ending changes (git autocrlf). */
function checksumMatches(sql: string, recorded: string): boolean {
  return [sql, sql.replace(/\r\n/g, '\n'), sql.replace(/\r?\n/g, '\r\n')].some((text) => sha256(text) === recorded);
}

async function readMigrations(migrationsDir: string): Promise<MigrationFile[]> {
  const lockFile = await readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8').catch(() => undefined);
  const provider = lockFile && /^\s*provider\s*=\s*"([^"]*)"/m.exec(lockFile)?.[1];
  if (provider && provider !== 'postgresql') {
    throw new Error(`${migrationsDir} holds migrations for provider "${provider}", not "postgresql"`);
  }

  const entries = await readdir(migrationsDir, { withFileTypes: true });
  // Folder names start with a UTC timestamp, so name order is creation order (as in Prisma).
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8').catch((error: unknown) => {
        throw new Error(`Migration folder ${name} has no readable migration.sql`, { cause: error });
      });
      return { name, sql, checksum: sha256(sql) };
    }),
  );
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
