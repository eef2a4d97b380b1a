import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's Chromium: playwright-core drives it (no browser download of its own works here). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The flags that work on these machines (TOOLCHAIN.md), as root and without a GPU. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Installs Debian's `chromium` with apt-get when it is missing (a clean CI machine runs as
 * root), so browser tests never depend on what a developer installed by hand. Returns the
 * executable's path.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'chromium']]) {
    const run = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${run.status ?? run.error?.message}); install Debian's chromium to run the browser tests`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is missing`);
  return CHROMIUM_PATH;
}
