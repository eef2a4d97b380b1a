#!/usr/bin/env node
// Lints every app's Prisma migrations, and the platform libraries' (libs/messaging/migrations,
// libs/persistence/migrations, tools/db/platform-models.mjs), with squawk 2.66 (the root's optional dependency
// @squawk-cli/linux-x64: squawk-cli's own package would name the other platforms' binaries, which
// 2.66.0 never published, and npm ci refuses a lockfile without them; elsewhere set SQUAWK=<binary>):
// a migration must keep the previous release's replicas working while it runs and after (expand/
// contract), and must not lock a busy table for long. A step of `npm test`; on its own: npm run db:lint.
//
// Rules: squawk's defaults, less the style and session-setting ones below. Migrations run in one
// transaction each (libs/persistence applyMigrations), except those marked `-- recur:no-transaction`,
// which run statement by statement and are linted as such (CREATE INDEX CONCURRENTLY belongs there,
// each statement `IF NOT EXISTS` so a retry after a failure is safe).
//
// Beyond squawk: a migration added since the app's last release (releases/<app>.json) must not drop
// or rename a table or column that the last release's Prisma schema still maps: its replicas run
// beside the new ones during the rollout. No exception lifts this one: drop in the release after
// the one that stopped using the thing (expand/contract).
//
// An exception is written beside its migration, in lint-exceptions.json of the migration's folder:
//   { "<squawk rule>": "why this migration is safe for the release that runs beside it" }
// (not as `-- squawk-ignore` in the SQL: editing an applied migration changes its checksum, and a
// reason must come with every exception). An exception that no longer matches a finding fails too.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { commitExists, git, lastRelease, RELEASED, ROOT } from '../release/projects.mjs';
import { mappedColumns, removals } from './migration-rules.mjs';
import { PLATFORM_LIBRARIES, platformModelDrift } from './platform-models.mjs';

/** Not about rolling upgrades: integer widths and serial vs identity are style. */
const EXCLUDED_RULES = [
  'prefer-bigint-over-int',
  'prefer-bigint-over-smallint',
  'prefer-identity',
  // The migrator runs each app's migrations at start-up under one advisory lock; timeouts belong
  // to that session, not to each file (a follow-up: set lock_timeout there).
  'require-lock-timeout',
  'require-statement-timeout',
];

/** What each finding means for a rolling upgrade, beside squawk's own words. */
const WHY = {
  'ban-drop-column': 'replicas of the previous release still read and write this column during the rollout (and after a rollback): stop using it in one release, drop it in a later one',
  'ban-drop-table': 'replicas of the previous release still use this table during the rollout: stop using it in one release, drop it in a later one',
  'renaming-column': 'the previous release still uses the old name: add the new column, write both, move the reads, drop the old one in a later release',
  'renaming-table': 'the previous release still uses the old name: create the new table beside it and move in steps',
  'adding-required-field': 'the previous release inserts rows without this column: make it nullable or give it a default',
  'adding-not-nullable-field': 'the previous release inserts rows without this column: make it nullable or give it a default',
  'changing-column-type': 'the table is rewritten under an exclusive lock, and the previous release still writes the old type: add a new column instead',
  'ban-drop-not-null': 'the previous release reads this column as never null: it would fail on the rows the new release writes',
  'require-concurrent-index-creation': 'CREATE INDEX blocks every write to the table while it builds: use CREATE INDEX CONCURRENTLY IF NOT EXISTS in a migration of its own marked `-- recur:no-transaction`',
  'require-concurrent-index-deletion': 'DROP INDEX blocks the table: use DROP INDEX CONCURRENTLY IF EXISTS in a migration marked `-- recur:no-transaction`',
  'ban-concurrent-index-creation-in-transaction': 'PostgreSQL refuses CONCURRENTLY inside a transaction: mark the migration `-- recur:no-transaction`',
};

const squawk = process.env.SQUAWK || join(ROOT, 'node_modules/@squawk-cli/linux-x64/bin/squawk');
if (!existsSync(squawk)) {
  console.error(`migration lint: no squawk at ${squawk}: npm installs it on linux-x64 only; elsewhere install squawk 2.66 and set SQUAWK`);
  process.exit(1);
}
const migrationFolders = (dir) => (existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(dir, entry.name)) : []);
const libraryMigrationDirs = PLATFORM_LIBRARIES.map(({ migrationsDir }) => join(ROOT, migrationsDir));
const migrations = [
  ...readdirSync(join(ROOT, 'apps')).flatMap((app) => migrationFolders(join(ROOT, 'apps', app, 'prisma/migrations'))),
  ...libraryMigrationDirs.flatMap(migrationFolders),
]
  .filter((dir) => existsSync(join(dir, 'migration.sql')))
  .sort();

const failures = [];
const sql = (dir) => readFileSync(join(dir, 'migration.sql'), 'utf8');
const outsideTransaction = (dir) => /^-- recur:no-transaction\s*$/m.test(sql(dir));

function lint(dirs, inTransaction) {
  if (dirs.length === 0) return [];
  const args = ['--reporter', 'json', '--pg-version', '18.0', ...(inTransaction ? ['--assume-in-transaction'] : []), `--exclude=${EXCLUDED_RULES.join(',')}`];
  const result = spawnSync(squawk, [...args, ...dirs.map((dir) => relative(ROOT, join(dir, 'migration.sql')))], { cwd: ROOT, encoding: 'utf8' });
  if (result.error || !result.stdout.trim().startsWith('[')) throw new Error(`squawk did not run: ${result.error?.message ?? result.stderr}`);
  return JSON.parse(result.stdout);
}

for (const dir of migrations) {
  if (/^\s*--\s*squawk-ignore/m.test(sql(dir))) {
    failures.push(`${relative(ROOT, dir)}/migration.sql: no \`-- squawk-ignore\` in migrations; write the exception and its reason in lint-exceptions.json beside it`);
  }
}
const findings = [...lint(migrations.filter((dir) => !outsideTransaction(dir)), true), ...lint(migrations.filter(outsideTransaction), false)];

const excused = new Set();
for (const finding of findings) {
  const folder = join(ROOT, finding.file, '..');
  const exceptionsFile = join(folder, 'lint-exceptions.json');
  const exceptions = existsSync(exceptionsFile) ? JSON.parse(readFileSync(exceptionsFile, 'utf8')) : {};
  if (typeof exceptions[finding.rule_name] === 'string' && exceptions[finding.rule_name].trim()) {
    excused.add(`${folder}\0${finding.rule_name}`);
    continue;
  }
  const why = WHY[finding.rule_name] ? `\n    why: ${WHY[finding.rule_name]}` : '';
  failures.push(`${finding.file}:${finding.line + 1} ${finding.rule_name}: ${finding.message}${finding.help ? ` ${finding.help}` : ''}${why}`);
}
for (const dir of migrations) {
  const exceptionsFile = join(dir, 'lint-exceptions.json');
  if (!existsSync(exceptionsFile)) continue;
  for (const [rule, reason] of Object.entries(JSON.parse(readFileSync(exceptionsFile, 'utf8')))) {
    if (typeof reason !== 'string' || !reason.trim()) failures.push(`${relative(ROOT, exceptionsFile)}: the exception for ${rule} gives no reason`);
    else if (!excused.has(`${dir}\0${rule}`)) failures.push(`${relative(ROOT, exceptionsFile)}: ${rule} no longer fires on this migration: remove the exception`);
  }
}

for (const project of RELEASED.filter((p) => p.dir.startsWith('apps/'))) {
  const release = lastRelease(project);
  const migrationsDir = `${project.dir}/prisma/migrations`;
  if (!release || !commitExists(release.commit) || !existsSync(join(ROOT, migrationsDir))) continue;
  const released = new Set(git('ls-tree', '--name-only', `${release.commit}:${migrationsDir}`).split('\n'));
  let readByRelease;
  for (const dir of migrations.filter((d) => d.startsWith(join(ROOT, migrationsDir) + '/'))) {
    const folder = dir.slice(dir.lastIndexOf('/') + 1);
    if (released.has(folder)) continue;
    readByRelease ??= mappedColumns(git('show', `${release.commit}:${project.dir}/prisma/schema.prisma`));
    for (const { table, column, verb } of removals(sql(dir))) {
      const columns = readByRelease.get(table);
      if (!columns || (column && !columns.has(column))) continue;
      const what = column ? `column ${table}.${column}` : `table ${table}`;
      failures.push(
        `${relative(ROOT, dir)}/migration.sql ${verb} ${what}, which ${project.key}'s last release ${release.version} (commit ${release.commit.slice(0, 12)}) still reads ` +
          `(${project.dir}/prisma/schema.prisma there maps it).\n    why: its replicas run beside the new ones during the rollout and would fail on every query that touches it; ` +
          'stop using it in this release and drop it in the next one (expand/contract)',
      );
    }
  }
}

// A library's migrations run on every service's database: a new one must not drop what any app's
// last release maps (the platform's tables are in each app's Prisma schema of that release).
const releasedApps = RELEASED.filter((p) => p.dir.startsWith('apps/')).map((project) => ({ project, release: lastRelease(project) }))
  .filter(({ project, release }) => release && commitExists(release.commit) && existsSync(join(ROOT, project.dir, 'prisma/schema.prisma')));
for (const { migrationsDir } of PLATFORM_LIBRARIES) {
  for (const dir of migrations.filter((d) => d.startsWith(join(ROOT, migrationsDir) + '/'))) {
    const folder = dir.slice(dir.lastIndexOf('/') + 1);
    for (const { project, release } of releasedApps) {
      const releasedFolders = spawnSync('git', ['ls-tree', '--name-only', `${release.commit}:${migrationsDir}`], { cwd: ROOT, encoding: 'utf8' }).stdout ?? '';
      if (releasedFolders.split('\n').includes(folder)) continue;
      const readByRelease = mappedColumns(git('show', `${release.commit}:${project.dir}/prisma/schema.prisma`));
      for (const { table, column, verb } of removals(sql(dir))) {
        const columns = readByRelease.get(table);
        if (!columns || (column && !columns.has(column))) continue;
        failures.push(
          `${relative(ROOT, dir)}/migration.sql ${verb} ${column ? `column ${table}.${column}` : `table ${table}`}, which ${project.key}'s last release ${release.version} ` +
            `(commit ${release.commit.slice(0, 12)}) still reads.\n    why: a library's migration runs on every service's database, and that release's replicas run beside the new ones during the rollout; ` +
            'stop using it in this release and drop it in the next one (expand/contract)',
        );
      }
    }
  }
}

for (const { app, model } of platformModelDrift(ROOT)) {
  failures.push(`apps/${app}/prisma/schema.prisma: model ${model} differs from the block its owning library declares; run node tools/db/platform-models.mjs --write`);
}

const excusedCount = excused.size;
if (failures.length) {
  console.error(`migration lint: ${failures.length} problem(s) in ${migrations.length} migrations`);
  for (const failure of failures) console.error(`  ${failure}`);
  console.error(
    '\nEvery migration must keep the previous release working while it rolls out (expand/contract: new columns nullable or defaulted, ' +
      'drops one release after the code stopped using the thing dropped, indexes built CONCURRENTLY). If a finding is safe here, say why in ' +
      'lint-exceptions.json beside the migration: { "<rule>": "<reason>" }.',
  );
  process.exit(1);
}
console.error(`migration lint: ${migrations.length} migrations clean (${excusedCount} written exceptions)`);
