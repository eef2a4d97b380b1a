import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStart, type StartedStack } from './npm-start';

/**
 * Under `npm start` every link Recur hands out opens a page of the gateway it started: a sales
 * link's `url`, a customer portal link, an invoice's `payment_url`. The mesh tests start the
 * gateway from its environment; this starts it the way `npm start` does (tools/start.mjs).
 */
/** The sandbox secret key the first start prints once. */
const sandboxSecretKey = (stack: StartedStack) => /sandbox secret\s+(recur_test_sk_\w+)/.exec(stack.stdout())![1];

/** Ctrl-C, and the exit code once everything stopped. */
async function stopNpmStart(stack: StartedStack): Promise<number | null> {
  stack.child.kill('SIGINT');
  return stack.exited;
}

const dataDir = mkdtempSync(join(tmpdir(), 'recur-start-links-'));
// The embedded PostgreSQL runs as another OS user when the tests run as root.
chmodSync(dataDir, 0o755);
let started: StartedStack | undefined;

afterAll(async () => {
  if (started) expect(await stopNpmStart(started)).toBe(0);
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

async function post(path: string, key: string, body: unknown): Promise<Record<string, string>> {
  const headers: Record<string, string> = body === undefined ? { 'x-api-key': key } : { 'x-api-key': key, 'content-type': 'application/json' };
  const response = await fetch(`${started!.baseUrl}/v1${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, string>;
  expect({ path, status: response.status, answer }).toEqual({ path, status: 201, answer: expect.anything() });
  return answer;
}

/** The link's page answers 200 with HTML naming what it shows. */
async function expectPage(url: string, shows: string): Promise<void> {
  const page = await fetch(url);
  expect({ url, status: page.status }).toEqual({ url, status: 200 });
  expect(await page.text()).toContain(shows);
}

it('hands out sales links, customer portal links and payment links that open on the gateway npm start runs', async () => {
  started = await npmStart(dataDir);
  const key = sandboxSecretKey(started);
  const token = '[A-Za-z0-9_-]{43}';

  const plan = await post('/plans', key, { name: 'Starter', pricing_model: 'flat_rate', amount_monthly: 9900, currency: 'zmw' });
  const link = await post('/sales-links', key, { kind: 'plan', title: 'Starter, monthly', plan_id: plan.id, billing_interval: 'monthly' });
  expect(link.url).toMatch(new RegExp(`^${started.baseUrl}/buy/${token}$`));
  await expectPage(link.url, 'Starter, monthly');

  const customer = await post('/customers', key, { name: 'Mwila Banda', email: 'mwila@example.com' });
  const portal = await post(`/customers/${customer.id}/portal-sessions`, key, undefined);
  expect(portal.url).toMatch(new RegExp(`^${started.baseUrl}/customer-portal/`));
  await expectPage(portal.url, 'Mwila Banda');

  const invoice = await post('/invoices', key, { customer: customer.id, amount: 25_000, currency: 'zmw', description: 'Set-up', status: 'open' });
  expect(invoice.payment_url).toMatch(new RegExp(`^${started.baseUrl}/pay/${token}$`));
  await expectPage(invoice.payment_url, invoice.number);
}, 240_000);
