#!/usr/bin/env node
// The last release of every app, built and ready to run: what the version-skew test
// (tests/mesh/test/skew.mesh.spec.ts) and the rolling-upgrade bench (tools/bench/upgrade.mjs) start
// beside today's build (docs/operations/upgrades.md#version-skew-tested).
//
// Each app's release record (releases/<app>.json) names the commit it was cut from. That commit is
// checked out in a scratch git worktree under ~/.cache/recur/releases/<commit> (RECUR_RELEASE_CACHE
// moves the folder) and installed and built with the bootstrap of THAT commit (its own lockfile,
// tools/bootstrap.mjs ensureInstalled/buildAll), once: a finished build is marked, and later runs
// reuse it in no time. Several processes asking at once wait for the first one's build (a lock file).
//
//   node tools/skew/releases.mjs          builds what is missing, prints {app: {version, commit, root}} as JSON
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastRelease, RELEASED, ROOT } from '../release/projects.mjs';

export const RELEASE_CACHE = process.env.RECUR_RELEASE_CACHE || join(homedir(), '.cache', 'recur', 'releases');
/** Written last into a release's folder: its install and build finished. */
const BUILT_MARKER = '.recur-release-built';

/**
 * Repairs a release's install needs before its own bootstrap can run, each with the reason. They touch
 * the release's root manifest and lockfile only (dev tools), never an app's code or dependencies.
 */
const INSTALL_REPAIRS = [
  {
    // 0.1.0 (bc1991e) lists squawk-cli 2.66.0, whose optional platform packages were never all
    // published, so `npm ci` refuses that lockfile ("Missing: @squawk-cli/darwin-arm64@ from lock
    // file"); main replaced it with @squawk-cli/linux-x64 (e304df7). It lints migrations; no app uses it.
    why: 'the root devDependency squawk-cli (a migration linter) names unpublished packages, so npm ci refuses the lockfile',
    applies: (manifest) => Boolean(manifest.devDependencies?.['squawk-cli']),
    repair(manifest, lock) {
      delete manifest.devDependencies['squawk-cli'];
      delete lock.packages[''].devDependencies['squawk-cli'];
      delete lock.packages['node_modules/squawk-cli'];
    },
  },
];

/** The apps (those shipped as images) with their last release: key, version, commit. */
export function appReleases() {
  return RELEASED.filter((project) => project.image).map((project) => {
    const release = lastRelease(project);
    if (!release) throw new Error(`${project.key} has no release record (releases/${project.key}.json)`);
    return { app: project.key, version: release.version, commit: release.commit };
  });
}

const log = (line) => process.stderr.write(`[releases] ${line}\n`);

function git(args, cwd = ROOT) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Waits for (and takes) the build lock of `commit`; a lock older than 30 minutes is a dead build's. */
async function takeLock(lockFile) {
  for (;;) {
    try {
      closeSync(openSync(lockFile, 'wx'));
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - statSync(lockFile).mtimeMs > 30 * 60_000) rmSync(lockFile, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

/** The folder of `commit`'s built release: built now unless the cache holds it. */
export async function buildRelease(commit) {
  const root = join(RELEASE_CACHE, commit);
  if (existsSync(join(root, BUILT_MARKER))) return root;
  mkdirSync(RELEASE_CACHE, { recursive: true });
  const lockFile = `${root}.lock`;
  await takeLock(lockFile);
  try {
    if (existsSync(join(root, BUILT_MARKER))) return root;
    const started = Date.now();
    const scratch = `${root}.building`;
    // A scratch worktree of the release commit (detached: no branch to clean up); a half-built one
    // starts over (`--force` reuses a registered path whose folder is gone).
    spawnSync('git', ['worktree', 'remove', '--force', scratch], { cwd: ROOT });
    rmSync(scratch, { recursive: true, force: true });
    if (spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status !== 0) {
      throw new Error(`release commit ${commit} is not in this clone (a shallow clone?): \`git fetch --unshallow\` brings the history the releases were cut from`);
    }
    log(`checking out ${commit.slice(0, 12)} in ${scratch}`);
    git(['worktree', 'add', '--detach', '--force', scratch, commit]);
    const manifestFile = join(scratch, 'package.json');
    const lockfile = join(scratch, 'package-lock.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    const lock = JSON.parse(readFileSync(lockfile, 'utf8'));
    const repairs = INSTALL_REPAIRS.filter((repair) => repair.applies(manifest));
    for (const repair of repairs) {
      log(`repairing the release's install: ${repair.why}`);
      repair.repair(manifest, lock);
    }
    if (repairs.length > 0) {
      writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      writeFileSync(lockfile, `${JSON.stringify(lock, null, 2)}\n`);
    }
    log(`installing and building ${commit.slice(0, 12)} with its own tools/bootstrap.mjs (a few minutes, once)`);
    const built = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('./tools/bootstrap.mjs'); m.ensureInstalled(); m.buildAll();"], {
      cwd: scratch,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    if (built.status !== 0) {
      throw new Error(`building release ${commit} failed (exit ${built.status ?? built.signal}):\n${`${built.stdout}${built.stderr}`.split('\n').slice(-60).join('\n')}`);
    }
    writeFileSync(join(scratch, BUILT_MARKER), `${JSON.stringify({ commit, builtAt: new Date().toISOString(), repairs: repairs.map((repair) => repair.why) }, null, 2)}\n`);
    // The worktree moves to its final name once whole (git keeps track of the move).
    git(['worktree', 'move', scratch, root]);
    log(`built ${commit.slice(0, 12)} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${root}`);
    return root;
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/** Every app's last release, built: app → { version, commit, root }. */
export async function builtReleases() {
  const releases = appReleases();
  const roots = new Map();
  for (const commit of new Set(releases.map((release) => release.commit))) roots.set(commit, await buildRelease(commit));
  return Object.fromEntries(releases.map((release) => [release.app, { version: release.version, commit: release.commit, root: roots.get(release.commit) }]));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await builtReleases())}\n`);
}
