import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CHROMIUM_ARGS, ensureChromium } from '@recur/testing';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Real Chromium for page tests: Debian's build driven by playwright-core. Contexts bypass the
 * pages' CSP only so the tests can inject axe-core; the pages themselves run no script.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS });
}

export async function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
}

/**
 * Console errors and uncaught page errors, collected per page: a page must have none. The one
 * message left out is Chromium's note that the document itself answered 4xx, which the pages
 * for refused links and forms do on purpose (the tests assert those statuses).
 */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (message.text().startsWith('Failed to load resource: the server responded with a status of 4') && message.location().url === page.url()) return;
    errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's violations of serious or critical impact on the page as it is now. */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  // Runs in the page, where axe-core put `axe` on the global object.
  const violations = (await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe.run().then((result) => result.violations))) as AxeViolation[];
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
}

/** With RECUR_SCREENSHOTS=<dir> set, saves the page as <dir>/<name>.png (the pictures in docs/). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.RECUR_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/**
 * Whether anything on the page is wider than the window: the document scrolls sideways, or an
 * element reaches past the right edge. A table inside `.table-wrap` scrolls in its own box by
 * design (the portal's tables), so what is inside one is judged by the box, not the table.
 */
export async function overflow(page: Page): Promise<string[]> {
  // Runs in the page (a string: this project's types have no DOM).
  return (await page.evaluate(`(() => {
    const root = document.documentElement;
    const found = [];
    if (root.scrollWidth > root.clientWidth) found.push('document ' + root.scrollWidth + ' > ' + root.clientWidth);
    for (const element of document.body.querySelectorAll('*')) {
      if (element.parentElement && element.parentElement.closest('.table-wrap')) continue;
      const box = element.getBoundingClientRect();
      if (box.right > root.clientWidth + 0.5) found.push(element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') + ' right ' + Math.round(box.right) + ' > ' + root.clientWidth);
    }
    return found;
  })()`)) as string[];
}
