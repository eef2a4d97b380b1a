import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type AppName, REPO_ROOT } from '@recur/testing';

/** Each app's last release (releases/<app>.json), built by tools/skew/releases.mjs: where to run it from. */
export interface BuiltRelease {
  version: string;
  commit: string;
  root: string;
}

/**
 * Builds (or finds in ~/.cache/recur/releases) the last release of every app, with the bootstrap of
 * the release's own commit. A first build takes minutes; a cached one, a fraction of a second.
 */
export async function builtReleases(): Promise<Record<AppName, BuiltRelease>> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'tools', 'skew', 'releases.mjs')], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as Record<AppName, BuiltRelease>;
}

export const SERVICES = ['catalog', 'subscription', 'invoicing', 'payments', 'usage-metering', 'webhook-dispatch'] as const satisfies readonly AppName[];
export const APPS = ['gateway', ...SERVICES] as const satisfies readonly AppName[];

/** A mixed mesh: which apps run their last release while the rest run this checkout. */
export interface Combination {
  name: string;
  old: readonly AppName[];
}

/**
 * What a rolling upgrade passes through, app by app: the old gateway in front of new services, the
 * new gateway in front of old ones, and each service old while every other app is new.
 */
export const COMBINATIONS: Combination[] = [
  { name: 'old gateway, new services', old: ['gateway'] },
  ...SERVICES.map((service) => ({ name: `old ${service}, every other app new`, old: [service] })),
  { name: 'new gateway, old services', old: [...SERVICES] },
];

/** The combination with no app old: the smoke's own control, so a failure of a mixed mesh is the mix's. */
export const ALL_NEW: Combination = { name: 'every app new (control)', old: [] };

/**
 * The changes since `commit` where a failure between `apps` would come from: their code, the
 * contracts and the libraries they share. The list to read first; the commit that broke a
 * combination is among them.
 */
export function changesSince(commit: string, apps: readonly AppName[]): string {
  const paths = ['proto', 'libs', ...apps.map((app) => `apps/${app}/src`), ...apps.map((app) => `apps/${app}/prisma`)];
  const log = execFileSync('git', ['log', '--oneline', '--no-merges', `${commit}..HEAD`, '--', ...paths], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const lines = log.split('\n').filter(Boolean);
  return lines.length === 0 ? '(none)' : `${lines.slice(0, 15).map((line) => `  ${line.slice(0, 160)}`).join('\n')}${lines.length > 15 ? `\n  … and ${lines.length - 15} more` : ''}`;
}

/** Whether the gateway's last release served `route` (a path of its OpenAPI document, releases/gateway.openapi.json). */
export function servedByReleasedGateway(route: string): boolean {
  const document = JSON.parse(readFileSync(join(REPO_ROOT, 'releases', 'gateway.openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
  return route in document.paths;
}

/** The changes since `commit` whose message names `route` (`GET /v1/events`): the first suspects of a failure there. */
export function changesNaming(commit: string, route: string): string {
  const log = execFileSync('git', ['log', '--oneline', '--no-merges', '--fixed-strings', `--grep=${route}`, `${commit}..HEAD`], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  return log ? log.split('\n').map((line) => `  ${line.slice(0, 200)}`).join('\n') : '  (none)';
}
