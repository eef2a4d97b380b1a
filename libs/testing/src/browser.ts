import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`); `npm test` installs it when missing (tools/test.mjs). */
export const CHROMIUM_PATH = process.env.RECUR_CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Real headless Chromium driven by playwright-core, for tests of the pages Recur serves. It
 * never downloads a browser of its own: the system's Chromium runs it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (npm test does it by itself)`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
