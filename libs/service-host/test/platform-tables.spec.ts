import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase, queryDatabase } from '@recur/testing';
import { SERVICE_PLATFORM_MIGRATIONS } from '../src/platform-migrations';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '../../..');
const PLATFORM_TABLES = ['outbox_events', 'inbox_events', 'command_results'];
/** Every app served by service-host: the ones whose database gets the platform's tables. */
const SERVICES = readdirSync(join(ROOT, 'apps')).filter((app) => existsSync(join(ROOT, 'apps', app, 'src/app.ts')) && app !== 'gateway');

/** What a table is, as PostgreSQL describes it: columns, constraints and indexes, by name. */
async function describeTables(databaseUrl: string): Promise<Record<string, unknown>> {
  const described: Record<string, unknown> = {};
  for (const table of PLATFORM_TABLES) {
    const columns = await queryDatabase(
      databaseUrl,
      `SELECT column_name, data_type, datetime_precision, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = $1 ORDER BY column_name`,
      [table],
    );
    const constraints = await queryDatabase(
      databaseUrl,
      `SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = to_regclass($1) ORDER BY conname`,
      [`public.${table}`],
    );
    const indexes = await queryDatabase(databaseUrl, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY indexname`, [table]);
    described[table] = { columns, constraints, indexes };
  }
  return described;
}

/** An app's migrations folder with no migration: a new app, whose own migrations create no platform table. */
function emptyMigrationsFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recur-new-app-'));
  writeFileSync(join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  return dir;
}

let fromLibraries: Record<string, unknown>;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('platform_new_app');
  const { applied } = await applyMigrations({ databaseUrl, migrationsDir: emptyMigrationsFolder(), libraries: SERVICE_PLATFORM_MIGRATIONS });
  expect(applied.every((name) => name.startsWith('messaging/') || name.startsWith('persistence/'))).toBe(true);
  fromLibraries = await describeTables(databaseUrl);
});

describe("the platform's tables", () => {
  it("a new app's database gets every one of them from the libraries alone", () => {
    for (const table of PLATFORM_TABLES) expect((fromLibraries[table] as { columns: unknown[] }).columns.length).toBeGreaterThan(0);
  });

  it.each(SERVICES)("in %s's fresh database, are exactly the libraries' DDL, whatever the app's released migrations created before", async (app) => {
    const databaseUrl = await createTestDatabase(`platform_${app}`);
    await applyMigrations({ databaseUrl, migrationsDir: join(ROOT, 'apps', app, 'prisma/migrations'), libraries: SERVICE_PLATFORM_MIGRATIONS });
    expect(await describeTables(databaseUrl)).toEqual(fromLibraries);
  });

  it("are adopted on a database upgraded from a release where the app's migrations made them: rows kept, history apart", async () => {
    const databaseUrl = await createTestDatabase('platform_upgrade');
    const migrationsDir = join(ROOT, 'apps', 'catalog', 'prisma/migrations');
    // What a release before the libraries owned the tables left: the app's migrations only.
    await applyMigrations({ databaseUrl, migrationsDir });
    await queryDatabase(databaseUrl, `INSERT INTO outbox_events (id, topic, key, type, payload, headers) VALUES ('evt_old', 'recur.catalog.internal', 'k', 't', '{}', '{}')`);
    await queryDatabase(databaseUrl, `INSERT INTO command_results (account_id, livemode, rpc, request_id) VALUES ('acct_1', false, 'recur.catalog.v1.CreatePlan', 'req_1')`);

    const upgraded = await applyMigrations({ databaseUrl, migrationsDir, libraries: SERVICE_PLATFORM_MIGRATIONS });
    expect(upgraded.applied.length).toBeGreaterThan(0);
    expect(upgraded.applied.every((name) => name.startsWith('messaging/') || name.startsWith('persistence/'))).toBe(true);
    expect(await describeTables(databaseUrl)).toEqual(fromLibraries);
    expect(await queryDatabase(databaseUrl, 'SELECT id FROM outbox_events')).toEqual([{ id: 'evt_old' }]);
    expect(await queryDatabase(databaseUrl, 'SELECT request_id FROM command_results')).toEqual([{ request_id: 'req_1' }]);

    // The app's history holds only the app's migrations; each library has its own.
    const appHistory = await queryDatabase<{ migration_name: string }>(databaseUrl, 'SELECT migration_name FROM _prisma_migrations');
    const appFolders = readdirSync(migrationsDir).filter((entry) => /^\d{14}_/.test(entry));
    expect(appHistory.map((row) => row.migration_name).sort()).toEqual(appFolders.sort());
    const messagingHistory = await queryDatabase(databaseUrl, 'SELECT migration_name FROM _recur_messaging_migrations');
    expect(messagingHistory.length).toBe(readdirSync(join(ROOT, 'libs/messaging/migrations')).filter((entry) => /^\d{14}_/.test(entry)).length);

    expect((await applyMigrations({ databaseUrl, migrationsDir, libraries: SERVICE_PLATFORM_MIGRATIONS })).applied).toEqual([]);
  });

  it("are declared in each app's Prisma schema exactly as their owning library declares them", () => {
    // Exits 1 and names the app and model when a copy differs.
    expect(() => execFileSync('node', [join(ROOT, 'tools/db/platform-models.mjs')], { cwd: ROOT, stdio: 'pipe' })).not.toThrow();
  });
});
