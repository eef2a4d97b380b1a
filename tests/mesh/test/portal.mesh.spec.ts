import { createHash } from 'node:crypto';
import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { collectPageErrors, launchChromium, newContext, screenshot, seriousAccessibilityViolations } from './browser';
import { api, eventually, type Keys, type Mesh, startMesh } from './mesh';

/**
 * The developer portal and the customer portal in real Chromium against a real mesh: sign-in,
 * keys made, rolled and revoked in the portal and used against /v1, Test and Replay arriving
 * signed at a real receiver, a customer changing their e-mail through a portal link
 * (customer.updated from the portal), cancelling at period end, and links that were edited or
 * ran out. Every page is checked with axe-core and must log no console error.
 */
/** Short links, so the expired-link test needs no fake clock; every other link is used at once. */
const PORTAL_LINK_TTL_SECONDS = 30;
const EMAIL = 'owner@portal-test.example';
const PASSWORD = 'correct horse battery staple';

let mesh: Mesh;
let keys: Keys;
let accountId: string;
let receiver: WebhookReceiver;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  [mesh, receiver, browser] = await Promise.all([
    startMesh({
      env: {
        'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
        gateway: { CUSTOMER_PORTAL_SESSION_TTL_SECONDS: String(PORTAL_LINK_TTL_SECONDS) },
      },
    }),
    startWebhookReceiver(),
    launchChromium(),
  ]);
  ({ accountId, keys } = await mesh.createAccount('Portal Test Co'));
  const user = await mesh.operator('POST', `/operator/accounts/${accountId}/users`, { email: EMAIL, password: PASSWORD });
  expect(user.status).toBe(201);
  expect(user.body).not.toHaveProperty('password');
  context = await newContext(browser);
  page = await context.newPage();
  pageErrors = collectPageErrors(page);
}, 600_000);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await browser?.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

/** Every page a test visits must be readable without script errors and without serious accessibility faults. */
async function checkPage(name: string, target: Page = page, errors: string[] = pageErrors): Promise<void> {
  expect(await seriousAccessibilityViolations(target)).toEqual([]);
  expect(errors).toEqual([]);
  await screenshot(target, name);
}

async function signIn(password = PASSWORD) {
  await page.goto(`${mesh.baseUrl}/portal/sign-in`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(password);
  return Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]).then(([response]) => response);
}

async function createKeyInPortal(fields: { app: string; type: string; scope: string; name: string }) {
  await page.goto(`${mesh.baseUrl}/portal/keys`);
  await page.getByLabel('App').selectOption(fields.app);
  await page.getByLabel('Type').selectOption(fields.type);
  await page.getByLabel('Scope').selectOption(fields.scope);
  await page.getByLabel('Name (optional)').fill(fields.name);
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create key' }).click()]);
  return response!;
}

const shownKey = () => page.getByTestId('new-key').textContent().then((text) => text!.trim());

describe('the developer portal', () => {
  it('refuses a wrong password and signs in the right one', async () => {
    expect((await signIn('not the password'))!.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain('not right');
    await checkPage('portal-sign-in');

    await signIn();
    expect(new URL(page.url()).pathname).toBe('/portal/keys');
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'recur_portal_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
  });

  it('makes a read-only key that reads /v1 and is refused a write', async () => {
    expect((await createKeyInPortal({ app: 'sandbox', type: 'test', scope: 'read_only', name: 'reporting' })).status()).toBe(201);
    const readOnly = await shownKey();
    expect(readOnly).toMatch(/^recur_test_sk_[0-9A-Za-z]{32}$/);
    await checkPage('portal-keys');

    expect((await api(mesh, readOnly)('GET', '/v1/customers')).status).toBe(200);
    const write = await api(mesh, readOnly)('POST', '/v1/customers', { name: 'Nope', email: 'nope@example.com' });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('api_key_read_only');

    // The page shows a new key once: a reload lists it redacted only.
    await page.goto(`${mesh.baseUrl}/portal/keys`);
    expect(await page.content()).not.toContain(readOnly);
  });

  it('keeps the key_mode_mismatch rule of the API', async () => {
    const response = await createKeyInPortal({ app: 'sandbox', type: 'live', scope: 'full', name: 'wrong' });
    expect(response.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('A live key can be created only on the live app.');
  });

  it('rolls a key (now, and with a grace period) and revokes one, each visible at /v1', async () => {
    await createKeyInPortal({ app: 'sandbox', type: 'test', scope: 'full', name: 'backend' });
    const first = await shownKey();
    expect((await api(mesh, first)('POST', '/v1/customers', { name: 'Full', email: 'full@example.com' })).status).toBe(201);
    // Keys are listed newest first.
    const firstId = (await page.locator('tr[data-key-id]').first().getAttribute('data-key-id'))!;

    // Roll now: the old key stops at once, the new one works.
    await page.locator(`tr[data-key-id="${firstId}"]`).getByLabel('Old key stops').selectOption('0');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Roll backend' }).click()]);
    const second = await shownKey();
    expect(second).not.toBe(first);
    expect((await api(mesh, first)('GET', '/v1/customers')).status).toBe(401);
    expect((await api(mesh, second)('GET', '/v1/customers')).status).toBe(200);

    // Roll with a grace period: both work until it ends.
    const secondId = (await page.locator('tr[data-key-id]').first().getAttribute('data-key-id'))!;
    await page.locator(`tr[data-key-id="${secondId}"]`).getByLabel('Old key stops').selectOption('3600');
    await Promise.all([page.waitForNavigation(), page.locator(`tr[data-key-id="${secondId}"]`).getByRole('button', { name: 'Roll backend' }).click()]);
    const third = await shownKey();
    expect((await api(mesh, second)('GET', '/v1/customers')).status).toBe(200);
    expect((await api(mesh, third)('GET', '/v1/customers')).status).toBe(200);
    expect(await page.locator(`tr[data-key-id="${secondId}"]`).textContent()).toContain('expires');

    // Revoke asks first: the button that revokes shows only once the row's Revoke… is opened.
    const thirdId = (await page.locator('tr[data-key-id]').first().getAttribute('data-key-id'))!;
    const thirdRow = page.locator(`tr[data-key-id="${thirdId}"]`);
    const revokeNow = thirdRow.getByRole('button', { name: 'Revoke backend now' });
    expect(await revokeNow.isVisible()).toBe(false);
    await thirdRow.getByText('Revoke…').click();
    expect(await thirdRow.textContent()).toContain('this cannot be undone');
    // Then it stops now.
    await Promise.all([page.waitForNavigation(), revokeNow.click()]);
    expect(await page.getByRole('status').textContent()).toContain('revoked');
    expect((await api(mesh, third)('GET', '/v1/customers')).status).toBe(401);
    expect(await page.locator(`tr[data-key-id="${thirdId}"]`).textContent()).toContain('revoked');
  });

  it('refuses a form post without the session CSRF token, and another account\'s key', async () => {
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'recur_portal_session')!;
    const headers = { cookie: `recur_portal_session=${cookie.value}`, 'content-type': 'application/x-www-form-urlencoded' };
    const before = await queryDatabase(mesh.databaseUrls.gateway, 'SELECT id FROM api_keys WHERE account_id = $1', [accountId]);
    const forged = await fetch(`${mesh.baseUrl}/portal/keys`, { method: 'POST', headers, body: 'app=sandbox&type=test&scope=full&csrf=guess', redirect: 'manual' });
    expect(forged.status).toBe(403);
    const foreignOrigin = await fetch(`${mesh.baseUrl}/portal/keys`, { method: 'POST', headers: { ...headers, origin: 'https://evil.example' }, body: 'app=sandbox&type=test', redirect: 'manual' });
    expect(foreignOrigin.status).toBe(403);
    expect(await queryDatabase(mesh.databaseUrls.gateway, 'SELECT id FROM api_keys WHERE account_id = $1', [accountId])).toHaveLength(before.length);

    // A key of another account is not found from this session.
    const other = await mesh.createAccount('Someone else');
    const [{ id: foreignKey }] = await queryDatabase<{ id: string }>(mesh.databaseUrls.gateway, 'SELECT id FROM api_keys WHERE account_id = $1 LIMIT 1', [other.accountId]);
    await page.goto(`${mesh.baseUrl}/portal/keys`);
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const revoke = await fetch(`${mesh.baseUrl}/portal/keys/${foreignKey}/revoke`, { method: 'POST', headers, body: `csrf=${encodeURIComponent(csrf)}`, redirect: 'manual' });
    expect(revoke.status).toBe(404);
    expect((await api(mesh, other.keys.test)('GET', '/v1/customers')).status).toBe(200);
  });
});

describe('webhooks in the developer portal', () => {
  let endpointId: string;
  let secret: string;
  const hookPath = '/hooks/portal';

  async function verified(path: string, count: number) {
    const arrived = await eventually(async () => {
      const got = await receiver.received(path);
      return got.length >= count ? got : undefined;
    }, 30_000, `${count} deliveries at ${path}`);
    return arrived.map((request) => constructEvent(request.body, new Headers(request.headers), secret));
  }

  it('adds an endpoint and reveals its secret on demand', async () => {
    await page.goto(`${mesh.baseUrl}/portal/sandbox/webhooks`);
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}${hookPath}`);
    await page.getByLabel('customer.updated').check();
    const [created] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Add endpoint' }).click()]);
    expect(created!.status()).toBe(201);
    secret = (await page.getByTestId('endpoint-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await checkPage('portal-webhooks');

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: `${receiver.url}${hookPath}` }).click()]);
    endpointId = page.url().split('/').pop()!;
    expect(await page.content()).not.toContain(secret);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Reveal signing secret' }).click()]);
    expect((await page.getByTestId('endpoint-secret').textContent())!.trim()).toBe(secret);
  });

  it('Test sends a signed webhook.test and Replay sends the same event again, signed', async () => {
    await page.goto(`${mesh.baseUrl}/portal/sandbox/webhooks/${endpointId}`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send test event' }).click()]);
    expect(await page.getByRole('status').textContent()).toContain('webhook.test');
    const [test] = await verified(hookPath, 1);
    expect(test.type).toBe('webhook.test');

    // The delivery and its attempt are listed; Replay sends the same event id again.
    await eventually(async () => {
      await page.reload();
      return (await page.locator('tr[data-delivery-id]').count()) > 0 && (await page.locator('tr[data-delivery-id]').first().textContent())!.includes('succeeded');
    }, 20_000, 'the delivery listed as succeeded');
    await checkPage('portal-endpoint');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: `Replay webhook.test ${test.id}` }).click()]);
    expect(await page.getByRole('status').textContent()).toContain('sent again');
    const [, replayed] = await verified(hookPath, 2);
    expect(replayed.id).toBe(test.id);
    expect(replayed.type).toBe('webhook.test');
  });

  it('disables, enables and deletes an endpoint, as PATCH and DELETE /v1/webhooks/:id do', async () => {
    // An endpoint of its own: the customer portal's tests below still listen on the first one.
    const made = await api(mesh, keys.test)('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/portal-doomed`, events: ['customer.created'] });
    expect(made.status).toBe(201);
    const doomedId = made.body.id as string;
    const listed = async () => ((await api(mesh, keys.test)('GET', '/v1/webhooks?limit=100')).body.data as { id: string; status: string }[]).find((endpoint) => endpoint.id === doomedId);
    await page.goto(`${mesh.baseUrl}/portal/sandbox/webhooks/${doomedId}`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Disable endpoint' }).click()]);
    expect(await page.getByRole('status').textContent()).toContain('disabled');
    expect(await listed()).toMatchObject({ status: 'disabled' });
    await checkPage('portal-endpoint-disabled');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Enable endpoint' }).click()]);
    expect(await listed()).toMatchObject({ status: 'enabled' });

    await page.getByText('Delete this endpoint').click();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Delete endpoint' }).click()]);
    expect(new URL(page.url()).pathname).toBe('/portal/sandbox/webhooks');
    expect(await page.getByRole('status').textContent()).toContain('deleted');
    expect(await listed()).toBeUndefined();
    expect((await page.goto(`${mesh.baseUrl}/portal/sandbox/webhooks/${doomedId}`))!.status()).toBe(404);
  });

  it('lists the account\'s events', async () => {
    const customer = await api(mesh, keys.test)('POST', '/v1/customers', { name: 'Logged', email: 'logged@example.com' });
    await eventually(async () => {
      await page.goto(`${mesh.baseUrl}/portal/sandbox/events`);
      return (await page.content()).includes(customer.body.id);
    }, 20_000, 'customer.created in the events log');
    expect(await page.locator('tbody').textContent()).toContain('customer.created');
    await checkPage('portal-events');
  });
});

describe('the customer portal', () => {
  let customerId: string;
  let invoice: { id: string; payment_url: string; number: string };
  let subscriptionId: string;
  let customerPage: Page;
  let customerErrors: string[];

  beforeAll(async () => {
    const call = api(mesh, keys.test);
    customerId = (await call('POST', '/v1/customers', { name: 'Grace Hopper', email: 'grace@example.com' })).body.id;
    const plan = await call('POST', '/v1/plans', { name: 'Team', pricing_model: 'flat_rate', amount_monthly: 2900 });
    const subscription = await call('POST', '/v1/subscriptions', { customer: customerId, plan: plan.body.id, billing_interval: 'monthly' });
    expect(subscription.status).toBe(201);
    subscriptionId = subscription.body.id;
    const created = await call('POST', '/v1/invoices', { customer: customerId, amount: 12_345, description: 'Consulting', status: 'open' });
    expect(created.status).toBe(201);
    invoice = created.body;
    customerPage = await (await newContext(browser)).newPage();
    customerErrors = collectPageErrors(customerPage);
  });

  async function portalLink(): Promise<string> {
    const session = await api(mesh, keys.test)('POST', `/v1/customers/${customerId}/portal-sessions`);
    expect(session.status).toBe(201);
    expect(session.body.expires_at - session.body.created).toBe(PORTAL_LINK_TTL_SECONDS);
    return session.body.url as string;
  }

  it('is refused to a read-only key', async () => {
    expect((await api(mesh, keys.testReadOnly)('POST', `/v1/customers/${customerId}/portal-sessions`)).status).toBe(403);
  });

  it('shows subscriptions and invoices, with the PDF and a pay link', async () => {
    const response = await customerPage.goto(await portalLink());
    expect(response!.status()).toBe(200);
    expect(await customerPage.locator(`tr[data-subscription-id="${subscriptionId}"]`).textContent()).toContain('Team');
    const row = customerPage.locator(`tr[data-invoice-id="${invoice.id}"]`);
    expect(await row.textContent()).toContain('$123.45');
    expect(await row.getByRole('link', { name: `Pay $123.45 for invoice ${invoice.number}` }).getAttribute('href')).toBe(invoice.payment_url);
    const pdf = await customerPage.request.get(new URL((await row.getByRole('link', { name: `Download invoice ${invoice.number} as PDF` }).getAttribute('href'))!, mesh.baseUrl).href);
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    expect((await pdf.body()).subarray(0, 5).toString()).toBe('%PDF-');
    // Cancelling is off until the account allows it.
    expect(await customerPage.getByRole('button', { name: /Cancel/ }).count()).toBe(0);
    await checkPage('customer-portal', customerPage, customerErrors);
  });

  it('changes the e-mail, which sends customer.updated saying it came from the portal', async () => {
    const hookPath = '/hooks/portal';
    const before = (await receiver.received(hookPath)).length;
    await customerPage.goto(await portalLink());
    await customerPage.getByLabel('E-mail').fill('grace.hopper@example.com');
    await Promise.all([customerPage.waitForNavigation(), customerPage.getByRole('button', { name: 'Save details' }).click()]);
    expect(await customerPage.getByRole('status').textContent()).toContain('saved');
    expect(await customerPage.getByLabel('E-mail').inputValue()).toBe('grace.hopper@example.com');

    const updated = await eventually(async () => {
      const events = (await receiver.received(hookPath)).slice(before).map((request) => JSON.parse(request.body));
      return events.find((event) => event.type === 'customer.updated');
    }, 30_000, 'customer.updated at the receiver');
    expect(updated.data).toMatchObject({ source: 'portal', object: { id: customerId, email: 'grace.hopper@example.com' }, previous_attributes: { email: 'grace@example.com' } });
    expect((await api(mesh, keys.test)('GET', `/v1/customers/${customerId}`)).body.email).toBe('grace.hopper@example.com');

    // The API's rules hold: an invalid address (past the browser's own check) is refused with 400.
    await customerPage.locator('#customer-email').evaluate((input) => input.setAttribute('type', 'text'));
    await customerPage.getByLabel('E-mail').fill('not-an-address');
    const [refused] = await Promise.all([customerPage.waitForNavigation(), customerPage.getByRole('button', { name: 'Save details' }).click()]);
    expect(refused!.status()).toBe(400);
    expect(await customerPage.getByRole('alert').textContent()).toContain('email must be a valid e-mail address');
  });

  it('cancels at period end once the account allows it in the developer portal', async () => {
    await page.goto(`${mesh.baseUrl}/portal/settings`);
    await page.getByLabel(/Customers may cancel/).check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save' }).click()]);
    expect(await page.getByRole('status').textContent()).toContain('saved');
    await checkPage('portal-settings');

    await customerPage.goto(await portalLink());
    await Promise.all([customerPage.waitForNavigation(), customerPage.getByRole('button', { name: 'Cancel at period end: Team' }).click()]);
    expect(await customerPage.getByRole('status').textContent()).toContain('end of the current period');
    expect((await api(mesh, keys.test)('GET', `/v1/subscriptions/${subscriptionId}`)).body).toMatchObject({ status: 'active', cancel_at_period_end: true });
  });

  it('answers an edited link with 403 and an expired one with 410, each a clear page', async () => {
    const link = await portalLink();
    const issuedAt = Date.now();
    // Edit the claims (another customer id) but keep the signature.
    const [base, token] = [link.slice(0, link.lastIndexOf('/') + 1), link.slice(link.lastIndexOf('/') + 1)];
    const [payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const edited = `${base}${Buffer.from(JSON.stringify({ ...claims, c: 'cus_someoneelse' })).toString('base64url')}.${signature}`;
    const tampered = await customerPage.goto(edited);
    expect(tampered!.status()).toBe(403);
    expect(await customerPage.locator('h1').textContent()).toBe('This link is not valid');
    expect(await customerPage.content()).not.toContain('Grace');
    await checkPage('customer-portal-invalid-link', customerPage, customerErrors);

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issuedAt + (PORTAL_LINK_TTL_SECONDS + 1) * 1000 - Date.now())));
    const expired = await customerPage.goto(link);
    expect(expired!.status()).toBe(410);
    expect(await customerPage.locator('h1').textContent()).toBe('This link has expired');
    await checkPage('customer-portal-expired-link', customerPage, customerErrors);
  }, 120_000);
});

describe('idle sessions', () => {
  // The timeout is 30 minutes after the last request; the test moves the session's last-seen time instead of waiting.
  it('end 30 minutes after the last request, however long the session had left', async () => {
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'recur_portal_session')!;
    const tokenHash = createHash('sha256').update(cookie.value).digest('hex');
    const lastSeen = async (ago: string) => {
      const moved = await queryDatabase(mesh.databaseUrls.gateway, `UPDATE portal_sessions SET last_seen_at = now() - $2::interval WHERE token_hash = $1 RETURNING id`, [tokenHash, ago]);
      expect(moved).toHaveLength(1);
    };
    const open = () => fetch(`${mesh.baseUrl}/portal/keys`, { headers: { cookie: `recur_portal_session=${cookie.value}` }, redirect: 'manual' });

    await lastSeen('29 minutes');
    expect((await open()).status).toBe(200);
    // That request moved last-seen to now: 29 more minutes of quiet still leave it open.
    const [{ idle }] = await queryDatabase<{ idle: number }>(mesh.databaseUrls.gateway, 'SELECT extract(epoch FROM now() - last_seen_at)::int AS idle FROM portal_sessions WHERE token_hash = $1', [tokenHash]);
    expect(idle).toBeLessThan(60);

    await lastSeen('30 minutes 1 second');
    const idleOut = await open();
    expect(idleOut.status).toBe(303);
    expect(idleOut.headers.get('location')).toBe('/portal/sign-in');
    expect(await queryDatabase(mesh.databaseUrls.gateway, 'SELECT id FROM portal_sessions WHERE token_hash = $1', [tokenHash])).toEqual([]);

    await signIn();
    expect(new URL(page.url()).pathname).toBe('/portal/keys');
  });
});

describe('signing out', () => {
  it('deletes the session: its cookie no longer signs anyone in', async () => {
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'recur_portal_session')!;
    await page.goto(`${mesh.baseUrl}/portal/keys`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign out' }).click()]);
    expect(new URL(page.url()).pathname).toBe('/portal/sign-in');
    const replayed = await fetch(`${mesh.baseUrl}/portal/keys`, { headers: { cookie: `recur_portal_session=${cookie.value}` }, redirect: 'manual' });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/portal/sign-in');
    expect(pageErrors).toEqual([]);
  });
});
