import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';

export interface ApplyMigrationsOptions {
  databaseUrl: string;
  /** A Prisma migrations folder: `<timestamp>_<name>/migration.sql` and `migration_lock.toml`. */
  migrationsDir: string;
  /**
   * The platform's own tables (outbox, inbox, command results), whose migrations live in the
   * libraries that use them: applied after the app's, in this order, each with its own history
   * table, under the same lock (docs/operations/upgrades.md#the-platforms-tables).
   */
  libraries?: readonly LibraryMigrations[];
  log?: (line: string) => void;
}

/** A library's migrations: a Prisma-format folder with a history of its own in every database it is applied to. */
export interface LibraryMigrations {
  /** The library, e.g. `messaging`; names its applied migrations (`messaging/<folder>`) in the result and logs. */
  library: string;
  migrationsDir: string;
  /** Its history table, the shape of `_prisma_migrations`, so its migrations and the app's are numbered apart. */
  historyTable: string;
}

/** The history table of an app's own migrations: Prisma Migrate's, so `prisma migrate deploy` reads it. */
export const APP_MIGRATIONS_TABLE = '_prisma_migrations';

/**
 * libs/persistence's own migrations (the `command_results` table), applied to every service's
 * database beside the app's: docs/operations/upgrades.md#the-platforms-tables.
 */
export const PERSISTENCE_MIGRATIONS: LibraryMigrations = {
  library: 'persistence',
  migrationsDir: path.join(__dirname, '..', 'migrations'),
  historyTable: '_recur_persistence_migrations',
};

export interface ApplyMigrationsResult {
  /** Names of the migrations this call applied, in order (empty when up to date). */
  applied: string[];
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
  /** Checksums of earlier texts of this file that databases may have recorded (`-- recur:replaces-checksum`). */
  replacedChecksums: string[];
  /** `-- recur:no-transaction`: run statement by statement, outside a transaction. */
  outsideTransaction: boolean;
}

/**
 * A line of its own, anywhere in a migration, that makes the migrator run it statement by
 * statement outside a transaction: what `CREATE INDEX CONCURRENTLY` (and `DROP INDEX
 * CONCURRENTLY`, `ALTER TYPE … ADD VALUE` before PostgreSQL 12) require. Such a migration should
 * hold only statements of that kind, each ending with `;` at the end of a line, and each safe to
 * repeat (`IF NOT EXISTS`), since a failure leaves the statements before it applied.
 */
export const NO_TRANSACTION_MARKER = '-- recur:no-transaction';
const NO_TRANSACTION_LINE = /^-- recur:no-transaction\s*$/m;
/**
 * `-- recur:replaces-checksum <sha256>`: the file was corrected after some databases applied an
 * earlier text, and a database that recorded that text's checksum counts as up to date. The
 * header must say why the earlier text's effect is acceptable (see the command_results migrations).
 */
const REPLACED_CHECKSUM_LINE = /^-- recur:replaces-checksum ([0-9a-f]{64})\s*$/gm;

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/** The key `prisma migrate deploy` locks, so it and this runner exclude each other. */
export const PRISMA_MIGRATE_LOCK_KEY = 72707369;

/** Prisma's own DDL for its history table (schema engine, PostgreSQL connector): its bookkeeping keeps the database's time. */
/* eslint-disable no-restricted-syntax -- Prisma's DDL, verbatim */
const createHistoryTable = (table: string) => `
CREATE TABLE IF NOT EXISTS ${table} (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;
/* eslint-enable no-restricted-syntax */

/**
 * Applies the unapplied migrations of a Prisma-format folder, each in its own transaction together
 * with its `_prisma_migrations` row (or, marked `-- recur:no-transaction`, statement by statement), under Prisma Migrate's advisory lock: replicas starting at
 * once apply each migration exactly once, and the history stays readable by `prisma migrate`.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<ApplyMigrationsResult> {
  const log = options.log ?? (() => undefined);
  const sets = [
    { prefix: '', migrationsDir: options.migrationsDir, historyTable: APP_MIGRATIONS_TABLE },
    ...(options.libraries ?? []).map((library) => ({ prefix: `${library.library}/`, migrationsDir: library.migrationsDir, historyTable: library.historyTable })),
  ];
  for (const set of sets) {
    if (!/^[a-z_][a-z0-9_]*$/.test(set.historyTable)) throw new Error(`invalid migration history table name: ${set.historyTable}`);
  }
  const migrationSets = await Promise.all(sets.map(async (set) => ({ ...set, migrations: await readMigrations(set.migrationsDir) })));

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
    const applied: string[] = [];
    // The app's first: its released migrations created the platform's tables before the libraries
    // owned them, and each library's first migration adopts what they created (IF NOT EXISTS).
    for (const { prefix, historyTable, migrations } of migrationSets) {
      await client.query(createHistoryTable(historyTable));
      // Rolled-back rows do not count as applied (Prisma re-applies those too).
      const { rows } = await client.query<MigrationRow>(
        `SELECT migration_name, checksum, finished_at FROM ${historyTable} WHERE rolled_back_at IS NULL ORDER BY started_at`,
      );
      const recorded = new Map(rows.map((row) => [row.migration_name, row]));
      checkHistory(migrations, recorded, log);

      for (const migration of migrations) {
        if (recorded.has(migration.name)) continue;
        const started = performance.now();
        await (migration.outsideTransaction ? applyOutsideTransaction(client, historyTable, migration) : applyOne(client, historyTable, migration));
        applied.push(`${prefix}${migration.name}`);
        log(`applied migration ${prefix}${migration.name} (${Math.round(performance.now() - started)} ms)`);
      }
    }
    return { applied };
  } finally {
    // Ending the session releases the advisory lock even if unlocking was skipped by an error.
    await client.end();
  }
}

async function applyOne(client: Client, historyTable: string, migration: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    const id = randomUUID();
    await client.query(
      `INSERT INTO ${historyTable} (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, clock_timestamp())`,
      [id, migration.checksum, migration.name],
    );
    // No parameters: simple-query protocol, so the file may hold many statements.
    await client.query(migration.sql);
    await client.query(
      `UPDATE ${historyTable} SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`,
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`Migration ${migration.name} failed and was rolled back: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A `-- recur:no-transaction` migration: each statement on its own (PostgreSQL refuses CREATE INDEX
 * CONCURRENTLY in a transaction block, and a multi-statement simple query is one such block).
 * The history row is written once every statement succeeded; on a failure nothing is recorded,
 * so the next start runs the migration again from its first statement.
 */
async function applyOutsideTransaction(client: Client, historyTable: string, migration: MigrationFile): Promise<void> {
  const startedAt = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  for (const statement of splitStatements(migration.sql)) {
    try {
      await client.query(statement);
    } catch (error) {
      throw new Error(
        `Migration ${migration.name} failed (run outside a transaction: the statements before this one stay applied; ` +
          `an interrupted CREATE INDEX CONCURRENTLY leaves an INVALID index, which \`DROP INDEX CONCURRENTLY\` removes) ` +
          `at: ${statement.split('\n').find((line) => line.trim() && !line.trim().startsWith('--'))?.trim()}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  await client.query(
    `INSERT INTO ${historyTable} (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
     VALUES ($1, $2, $3, $4, clock_timestamp(), 1)`,
    [randomUUID(), migration.checksum, migration.name, startedAt.rows[0]!.now],
  );
}

/** Statements of a no-transaction migration: each ends with `;` at the end of a line; comments are kept with the next one. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;[ \t]*(?:\r?\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.split('\n').some((line) => line.trim() && !line.trim().startsWith('--')));
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
    } else if (file.replacedChecksums.includes(row.checksum)) {
      log(`migration ${row.migration_name} was recorded under an earlier text that this one declares it replaces`);
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
      return {
        name,
        sql,
        checksum: sha256(sql),
        replacedChecksums: [...sql.matchAll(REPLACED_CHECKSUM_LINE)].map((match) => match[1]!),
        outsideTransaction: NO_TRANSACTION_LINE.test(sql),
      };
    }),
  );
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
