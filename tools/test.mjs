#!/usr/bin/env node
// `npm test`: every check, on real infrastructure, from a fresh clone.
//   1. install and build (proto and Prisma code generation included)
//   2. typecheck, lint, buf lint; each app's contracts against its last release (tools/contracts:
//      buf breaking, oasdiff on /openapi.json, the public JSON shapes); /openapi.json linted by
//      Redocly and Spectral with zero warnings (tools/openapi); the migration linter (tools/db)
//   3. one embedded PostgreSQL and one single-node Kafka broker for the whole run
//   4. every Jest project: unit, service (each app as its own process) and mesh tests (the
//      version-skew test among them, on each app's last release, built once and cached)
//   5. the Helm chart and deploy files (helm lint/template, manifests up to date)
// Set RECUR_TEST_SKIP_HELM=1 to skip step 5 on a machine without Go.
//
// `npm run test:affected` (`--affected`): the same steps for what a change touches, for a service
// team's own loop: the projects nx finds affected since RECUR_AFFECTED_BASE (default: origin/main,
// else main), uncommitted changes included — their typecheck, lint and Jest projects (the mesh
// tests when any app is affected), the chart checks only when helm/ or deploy/ changed. The
// contract and migration checks always run (they are per app and quick). CI runs `npm test`.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAll, ensureInstalled, ROOT } from './bootstrap.mjs';

const AFFECTED = process.argv.includes('--affected');
/** What the command line passes on to Jest (a test name pattern, say). */
const jestArgs = process.argv.slice(2).filter((argument) => argument !== '--affected');

/** The base a change is compared with: RECUR_AFFECTED_BASE, else origin/main when the clone has it, else main. */
function affectedBase() {
  if (process.env.RECUR_AFFECTED_BASE) return process.env.RECUR_AFFECTED_BASE;
  return spawnSync('git', ['rev-parse', '--verify', '--quiet', 'origin/main'], { cwd: ROOT }).status === 0 ? 'origin/main' : 'main';
}

/**
 * The folders (libs/<x>, apps/<x>, tests/<x>) of the projects nx finds affected since `base`,
 * working-tree changes included; every folder when not `--affected`.
 */
function projectFolders(base) {
  const folders = ['libs', 'apps', 'tests'].flatMap((parent) => readdirSync(join(ROOT, parent)).map((name) => join(parent, name)));
  if (!base) return folders;
  const shown = spawnSync('npx', ['nx', 'show', 'projects', '--affected', `--base=${base}`, '--json'], { cwd: ROOT, encoding: 'utf8' });
  if (shown.status !== 0) throw new Error(`nx could not list the affected projects since ${base}: ${shown.stderr}`);
  const affected = new Set(JSON.parse(shown.stdout));
  return folders.filter((folder) => {
    const manifest = join(ROOT, folder, 'package.json');
    return existsSync(manifest) && affected.has(JSON.parse(readFileSync(manifest, 'utf8')).name);
  });
}

/** True when a file under one of `paths` changed since `base` (committed or not). */
function changedUnder(base, paths) {
  const diff = spawnSync('git', ['diff', '--name-only', base, '--', ...paths], { cwd: ROOT, encoding: 'utf8' });
  const untracked = spawnSync('git', ['ls-files', '--others', '--exclude-standard', '--', ...paths], { cwd: ROOT, encoding: 'utf8' });
  return `${diff.stdout}${untracked.stdout}`.trim().length > 0;
}

const timings = [];
async function step(name, fn) {
  const started = Date.now();
  console.error(`\n=== ${name}`);
  await fn();
  timings.push([name, ((Date.now() - started) / 1000).toFixed(1)]);
}
/**
 * Runs a command without blocking this process's event loop: the PostgreSQL and Kafka
 * servers started here write their logs into pipes this process must keep draining
 * (a blocked loop let the broker's pipe fill up and the broker stall mid-run).
 */
async function run(command, args, env = {}) {
  console.error(`» ${command} ${args.join(' ')}`);
  const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
  const [code, signal] = await new Promise((resolve) => child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal])));
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${code ?? signal})`);
}

let postgres;
let kafka;
/** The local broker's folder (its log segments reach gigabytes over a run), removed at the end. */
let infrastructureDir;
try {
  await step('install and build', () => {
    ensureInstalled();
    buildAll();
  });
  // The invoice PDF tests read PDFs back with poppler's pdftotext (Debian: poppler-utils).
  if (spawnSync('pdftotext', ['-v']).error) {
    await step('install pdftotext (poppler-utils)', async () => {
      await run('apt-get', ['update', '-qq']);
      await run('apt-get', ['install', '-y', '-qq', 'poppler-utils']);
    });
  }
  // The page tests drive Debian's Chromium with playwright-core (libs/testing ensureChromium).
  if (!existsSync('/usr/bin/chromium')) {
    await step('install chromium', () => createRequire(import.meta.url)('@recur/testing').ensureChromium());
  }
  const base = AFFECTED ? affectedBase() : undefined;
  const folders = projectFolders(base);
  if (AFFECTED) console.error(`affected since ${base}: ${folders.join(', ') || 'nothing'}`);
  await step('typecheck', () => run('npx', ['nx', ...(AFFECTED ? ['affected', `--base=${base}`] : ['run-many']), '-t', 'typecheck', '--output-style=stream-without-prefixes']));
  await step('lint', () => run('npx', ['eslint', ...(AFFECTED ? [...folders, 'tools'] : ['.'])]));
  await step('buf lint', () => run('npx', ['buf', 'lint', 'proto']));
  // The checks' own rules (node's test runner; tools/**/*.test.mjs).
  const toolTests = readdirSync(join(ROOT, 'tools'), { recursive: true }).filter((file) => file.endsWith('.test.mjs')).map((file) => join('tools', file));
  await step('tools: tests of the contract and migration rules', () => run('node', ['--test', ...toolTests]));
  await step('contracts against the last releases', () => run('node', ['tools/contracts/check.mjs']));
  await step('OpenAPI lint (Redocly, Spectral)', () => run('node', ['tools/openapi/lint.mjs']));
  await step('migration lint', () => run('node', ['tools/db/lint-migrations.mjs']));

  // Jest projects are named after their folders (each jest.config.js's displayName).
  const projects = folders.filter((folder) => !folder.startsWith('tests')).map((folder) => folder.split('/')[1]);
  const meshAffected = folders.includes(join('tests', 'mesh'));
  if (projects.length > 0 || meshAffected) {
    const require = createRequire(import.meta.url);
    // Containers where a Docker engine answers (testcontainers), local processes elsewhere.
    const { startTestPostgres, startTestKafka, dockerEngineAvailable } = require('@recur/testing');
    await step('start PostgreSQL and Kafka', async () => {
      const dir = (infrastructureDir = mkdtempSync(join(tmpdir(), 'recur-test-')));
      chmodSync(dir, 0o755);
      console.error(dockerEngineAvailable() ? 'Docker engine found: testcontainers' : 'no Docker engine: embedded PostgreSQL and a local Kafka broker');
      [postgres, kafka] = await Promise.all([startTestPostgres(), startTestKafka(join(dir, 'kafka'))]);
      console.error(`PostgreSQL ${postgres.value}\nKafka ${kafka.value}`);
    });
    const infrastructure = { RECUR_TEST_PG_ADMIN_URL: postgres.value, KAFKA_BROKERS: kafka.value };
    // Jest ends once its tests have: a handle some failed setup left open (a mesh's mail catcher
    // once) must turn into a red result, not keep CI waiting out its whole time limit.
    const jestRun = ['jest', '--ci', '--forceExit'];
    if (projects.length > 0) {
      await step('jest: unit and service tests', () => run('npx', [...jestRun, '--maxWorkers=2', '--selectProjects', ...projects, ...jestArgs], infrastructure));
    }
    // Each mesh file runs seven processes; one file at a time keeps 2 cores from thrashing.
    if (meshAffected) {
      // The version-skew test runs each app's last release (tools/skew/releases.mjs): built once, cached in ~/.cache/recur/releases.
      await step('build the last releases (cached)', () => run('node', ['tools/skew/releases.mjs']));
      await step('jest: mesh tests', () => run('npx', [...jestRun, '--runInBand', '--selectProjects', 'mesh', ...jestArgs], infrastructure));
    }
  }
  if (process.env.RECUR_TEST_SKIP_HELM !== '1' && (!AFFECTED || changedUnder(base, ['helm', 'deploy', 'tools/helm']))) {
    await step('helm chart and deploy files', () => run('bash', ['tools/helm/check.sh']));
  }
} catch (error) {
  console.error(`\nFAILED: ${error.message}`);
  process.exitCode = 1;
} finally {
  await kafka?.stop().catch(() => undefined);
  await postgres?.stop().catch(() => undefined);
  if (infrastructureDir) rmSync(infrastructureDir, { recursive: true, force: true });
  console.error('\n=== timings (s)');
  for (const [name, seconds] of timings) console.error(`${seconds.padStart(7)}  ${name}`);
}
