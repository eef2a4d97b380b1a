// What Recur releases on its own, and where each release is recorded.
//
// Every app, and each library published on its own (@recur/webhooks, @recur/node, @recur/cli), has its own version (its
// package.json), its own CHANGELOG.md, and a release record releases/<key>.json:
//   { "name", "version", "commit", "date" }
// `commit` is the commit the release was cut from: the checks of tools/contracts compare today's
// contracts with the ones at that commit. A file rather than a git tag, because tags do not travel
// with a clone of a branch; the commit is an ancestor of every later commit of the branch, so a
// clone with its history (not `--depth 1`) can read it. The gateway's release also keeps the public
// OpenAPI document it served (releases/gateway.openapi.json): building the document of an old
// commit would mean building the old gateway.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RELEASES_DIR = join(ROOT, 'releases');
export const OPENAPI_RELEASE_FILE = join(RELEASES_DIR, 'gateway.openapi.json');

/**
 * key: the release record's name; dir: the package; image: it ships as the image recur-<key>
 * (helm values apps.<key>.image.tag, deploy/compose.yaml); proto: its gRPC package folder under
 * proto/ (recur/common and recur/events, which every service imports, are checked with each).
 */
export const RELEASED = [
  { key: 'gateway', dir: 'apps/gateway', image: true },
  { key: 'catalog', dir: 'apps/catalog', image: true, proto: 'recur/catalog' },
  { key: 'subscription', dir: 'apps/subscription', image: true, proto: 'recur/subscription' },
  { key: 'invoicing', dir: 'apps/invoicing', image: true, proto: 'recur/invoicing' },
  { key: 'payments', dir: 'apps/payments', image: true, proto: 'recur/payments' },
  { key: 'usage-metering', dir: 'apps/usage-metering', image: true, proto: 'recur/usage_metering' },
  { key: 'webhook-dispatch', dir: 'apps/webhook-dispatch', image: true, proto: 'recur/webhook_dispatch' },
  { key: 'webhooks', dir: 'libs/webhooks' },
  { key: 'node', dir: 'libs/sdk' },
  { key: 'cli', dir: 'libs/cli' },
].map((project) => ({ ...project, name: readJson(join(ROOT, project.dir, 'package.json')).name }));

/** Shared proto packages, part of every service's contract. */
export const SHARED_PROTO = ['recur/common', 'recur/events'];

export function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

export function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

export const packageVersion = (project) => readJson(join(ROOT, project.dir, 'package.json')).version;
export const releaseFile = (project) => join(RELEASES_DIR, `${project.key}.json`);
export const lastRelease = (project) => (existsSync(releaseFile(project)) ? readJson(releaseFile(project)) : undefined);

export function git(...args) {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function commitExists(commit) {
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
    return true;
  } catch {
    return false;
  }
}

/** The public OpenAPI document exactly as the gateway serves it at /openapi.json (from its build). */
export function buildOpenApiDocument() {
  const require = createRequire(join(ROOT, 'apps/gateway/package.json'));
  const built = join(ROOT, 'apps/gateway/dist/openapi/openapi.js');
  if (!existsSync(built)) throw new Error('apps/gateway is not built: run `npx nx run @recur/gateway:build` (npm test builds it first)');
  require('reflect-metadata');
  return require(built).buildOpenApiDocument();
}
