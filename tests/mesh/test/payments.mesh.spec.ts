import type { Browser } from 'playwright-core';
import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { collectPageErrors, launchChromium, newContext, screenshot, seriousAccessibilityViolations } from './browser';
import { constructEvent } from '@recur/webhooks';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Getting paid, as a new user would: an invoice paid through the sandbox payer page in real
 * Chromium, landing on the return page, the invoice paid through the API and a signed
 * invoice.paid webhook at a real receiver; a past_due subscription back to active once its
 * invoice is paid; the door's answers to bad initiations.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let browser: Browser;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  [mesh, receiver, browser] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver(), launchChromium()]);
  ({ keys } = await mesh.createAccount('Lusaka Fibre'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop(), browser?.close()]);
}, 60_000);

async function openInvoice(amount: number, status = 'open') {
  const customer = await call('POST', '/v1/customers', { name: 'Mwila Banda', email: 'mwila@example.com' });
  const invoice = await call('POST', '/v1/invoices', { customer: customer.body.id, amount, currency: 'zmw', description: 'Fibre, December', status });
  expect(invoice.status).toBe(201);
  return invoice.body;
}

describe('paying an invoice', () => {
  it('through the sandbox payer page in Chromium: approve, land on the return page, invoice paid, signed invoice.paid webhook', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/paid`, events: ['invoice.paid'] });
    const invoice = await openInvoice(12_345);
    const initiated = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
    expect(initiated.status).toBe(201);
    expect(initiated.body).toMatchObject({ object: 'payment', id: expect.stringMatching(/^pay_/), status: 'pending', invoice: invoice.id, amount: 12_345, currency: 'zmw', livemode: false });
    expect(initiated.body.redirectUrl).toMatch(new RegExp(`^${mesh.baseUrl}/sandbox/pay/[A-Za-z0-9_-]{43}$`));
    // A repeat while pending answers the same payment.
    expect((await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' })).body.id).toBe(initiated.body.id);

    const page = await browser.newPage();
    try {
      await page.goto(initiated.body.redirectUrl);
      expect(await page.getByTestId('amount').textContent()).toBe('ZMW\u00a0123.45');
      expect(await page.getByTestId('invoice-number').textContent()).toBe(invoice.number);
      expect(await page.getByTestId('phone-number').textContent()).toBe(SANDBOX_MAGIC_NUMBERS.succeed);
      const html = await page.content();
      expect(html).not.toMatch(/recur_(test|live|publishable)_sk_/);
      expect(html).toContain('name="csrf"');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/pay\/return\//);
      expect(await page.getByTestId('payment-status').getAttribute('data-status')).toBe('succeeded');
      expect(await page.getByTestId('payment-status').textContent()).toContain('Payment received');
    } finally {
      await page.close();
    }

    const paid = await eventually(async () => {
      const current = await call('GET', `/v1/invoices/${invoice.id}`);
      return current.body.status === 'paid' ? current.body : undefined;
    }, 20_000, 'the invoice paid');
    expect(paid).toMatchObject({ amount_paid: 12_345, amount_due: 0, paid_at: expect.any(Number) });
    expect((await call('GET', `/v1/payments/${initiated.body.id}`)).body).toMatchObject({ status: 'succeeded', settled_at: expect.any(Number) });
    const listed = await call('GET', `/v1/payments?invoice=${invoice.id}`);
    expect(listed.body).toMatchObject({ object: 'list', total: 1, data: [{ id: initiated.body.id }] });

    const [delivery] = await eventually(async () => {
      const got = await receiver.received('/paid');
      return got.length > 0 ? got : undefined;
    }, 60_000, 'the invoice.paid webhook');
    const event = constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as { type: string; data: { object: { id: string; status: string }; payment: string } };
    expect(event).toMatchObject({ type: 'invoice.paid', data: { object: { id: invoice.id, status: 'paid' }, payment: initiated.body.id } });
  });

  it('refuses a forged decision (no CSRF token) and a post from another origin', async () => {
    const invoice = await openInvoice(500);
    const { body: payment } = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
    const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(payment.redirectUrl, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
    expect((await form({ decision: 'approve' })).status).toBe(403);
    const pageResponse = await fetch(payment.redirectUrl);
    const cookie = pageResponse.headers.get('set-cookie')!.split(';')[0];
    const csrf = /name="csrf" value="([^"]+)"/.exec(await pageResponse.text())![1];
    expect((await form({ decision: 'approve', csrf }, { cookie, origin: 'https://evil.example' })).status).toBe(403);
    expect((await call('GET', `/v1/payments/${payment.id}`)).body.status).toBe('pending');
    const accepted = await form({ decision: 'approve', csrf }, { cookie, origin: mesh.baseUrl });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, expect.stringMatching(/^\/pay\/return\//)]);
    expect((await call('GET', `/v1/payments/${payment.id}`)).body.status).toBe('succeeded');
  });

  it('answers bad initiations at the door: unknown provider 400, bad phone 400, draft 409, unknown invoice 400', async () => {
    const open = await openInvoice(900);
    const draft = await openInvoice(900, 'draft');
    const cases: [Record<string, unknown>, number, string, string?][] = [
      [{ invoice_id: open.id, phone_number: '+260971234567', provider: 'PAYPAL' }, 400, 'parameter_invalid', 'provider'],
      [{ invoice_id: open.id, phone_number: '0971234567', provider: 'MTN_MOMO_ZMB' }, 400, 'parameter_invalid', 'phone_number'],
      [{ invoice_id: open.id, phone_number: '+254712345678', provider: 'MTN_MOMO_ZMB' }, 400, 'phone_number_provider_mismatch', 'phone_number'],
      [{ invoice_id: draft.id, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' }, 409, 'invoice_draft'],
      [{ invoice_id: 'in_doesnotexist', phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' }, 400, 'resource_missing', 'invoice_id'],
    ];
    for (const [body, status, code, param] of cases) {
      const response = await call('POST', '/v1/payments/initiate', body);
      expect({ body, status: response.status, code: response.body.error.code, param: response.body.error.param }).toEqual({ body, status, code, param });
    }
    // Another app's invoice does not exist for a live key.
    expect((await api(mesh, keys.live)('POST', '/v1/payments/initiate', { invoice_id: open.id, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' })).body.error.code).toBe('resource_missing');
  });
});

describe('provider rules before money moves', () => {
  it('refuses a USD invoice to MTN MoMo Zambia with a 400, named or predicted, and creates no payment', async () => {
    const customer = await call('POST', '/v1/customers', { name: 'Chanda Mulenga', email: 'chanda@example.com' });
    const invoice = (await call('POST', '/v1/invoices', { customer: customer.body.id, amount: 2_500, currency: 'usd', description: 'Hosting, December', status: 'open' })).body;
    const named = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: '+260961234567', provider: 'MTN_MOMO_ZMB' });
    expect({ status: named.status, code: named.body.error.code, param: named.body.error.param }).toEqual({ status: 400, code: 'currency_not_supported_by_provider', param: 'provider' });
    expect(named.body.error.message).toContain('MTN MoMo Zambia');
    // No provider named: the number's (MTN MoMo Zambia) is predicted, and refused the same way.
    const predicted = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: '+260961234567' });
    expect({ status: predicted.status, code: predicted.body.error.code }).toEqual({ status: 400, code: 'currency_not_supported_by_provider' });
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.total).toBe(0);
    expect((await call('GET', `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'open', amount_due: 2_500 });
  });

  it('predicts the provider when none is named, and the payer page shows it by name', async () => {
    const invoice = await openInvoice(4_000);
    const initiated = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: '+260961000001' });
    expect(initiated.status).toBe(201);
    expect(initiated.body).toMatchObject({ provider: 'MTN_MOMO_ZMB', status: 'pending' });
    const page = await browser.newPage();
    try {
      await page.goto(initiated.body.redirectUrl);
      expect(await page.getByTestId('provider').textContent()).toBe('MTN MoMo Zambia');
      expect(await page.content()).not.toContain('>MTN_MOMO_ZMB<');
    } finally {
      await page.close();
    }
  });
});

/** A draft raised and finalized through the API: its payment_url is the hosted payment page. */
async function finalizedInvoice(amount: number) {
  const draft = await openInvoice(amount, 'draft');
  const finalized = await call('POST', `/v1/invoices/${draft.id}/finalize`);
  expect(finalized.status).toBe(200);
  expect(finalized.body.payment_url).toMatch(new RegExp(`^${mesh.baseUrl}/pay/[A-Za-z0-9_-]{43}$`));
  return finalized.body as { id: string; number: string; due_date: string; payment_url: string };
}

describe("the invoice's hosted payment page (payment_url)", () => {
  it('pays an invoice in Chromium: provider and phone, Approve on the sandbox payer page, the return page; then shows it paid', async () => {
    const invoice = await finalizedInvoice(12_345);
    const context = await newContext(browser);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      expect((await page.goto(invoice.payment_url))!.status()).toBe(200);
      expect(await page.getByTestId('amount-due').textContent()).toBe('ZMW\u00a0123.45');
      expect(await page.getByTestId('invoice-number').textContent()).toBe(invoice.number);
      expect(await page.getByTestId('seller').textContent()).toBe('Lusaka Fibre');
      expect(await page.getByTestId('due-date').textContent()).toBe(invoice.due_date);
      expect(await page.getByTestId('invoice-status').getAttribute('data-status')).toBe('open');
      expect(await page.content()).not.toMatch(/recur_(test|live|publishable)_sk_/);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'invoice-payment-page');
      expect(errors).toEqual([]);

      await page.getByLabel('Mobile-money provider').selectOption('MTN_MOMO_ZMB');
      await page.getByLabel('Phone number, in international format').fill(SANDBOX_MAGIC_NUMBERS.succeed);
      await page.getByRole('button', { name: 'Pay ZMW\u00a0123.45' }).click();
      await page.waitForURL(new RegExp(`^${mesh.baseUrl}/sandbox/pay/[A-Za-z0-9_-]{43}$`));
      expect(await page.getByTestId('invoice-number').textContent()).toBe(invoice.number);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/pay\/return\//);
      expect(await page.getByTestId('payment-status').getAttribute('data-status')).toBe('succeeded');

      await eventually(async () => (await call('GET', `/v1/invoices/${invoice.id}`)).body.status === 'paid', 20_000, 'the invoice paid');
      // The sandbox payer and return pages too: no console error on the whole way.
      expect(errors).toEqual([]);
      expect((await page.goto(invoice.payment_url))!.status()).toBe(200);
      expect(await page.getByTestId('paid-notice').textContent()).toContain('paid — thank you');
      expect(await page.getByRole('button', { name: /^Pay/ }).count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('offers the providers of the invoice\'s currency by name, and predicts one from the number when the payer picks none', async () => {
    const invoice = await finalizedInvoice(2_000);
    const page = await browser.newPage();
    try {
      await page.goto(invoice.payment_url);
      const options = await page.getByLabel('Mobile-money provider').locator('option').allTextContents();
      expect(options).toEqual(['Find it from my phone number', 'MTN MoMo Zambia', 'Airtel Money Zambia', 'Zamtel Kwacha Zambia']);
      await page.getByLabel('Phone number, in international format').fill('+260951000001');
      await page.getByRole('button', { name: /^Pay/ }).click();
      await page.waitForURL(new RegExp(`^${mesh.baseUrl}/sandbox/pay/[A-Za-z0-9_-]{43}$`));
      expect(await page.getByTestId('provider').textContent()).toBe('Zamtel Kwacha Zambia');
    } finally {
      await page.close();
    }
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.data).toMatchObject([{ provider: 'ZAMTEL_ZMB' }]);
  });

  it('shows a refused phone number or provider on the form again, and starts no payment', async () => {
    const invoice = await finalizedInvoice(900);
    const page = await browser.newPage();
    try {
      await page.goto(invoice.payment_url);
      await page.getByLabel('Mobile-money provider').selectOption('MTN_MOMO_ZMB');
      await page.getByLabel('Phone number, in international format').fill('0971234567');
      const [refused] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: /^Pay/ }).click()]);
      expect(refused.status()).toBe(400);
      expect(await page.getByTestId('payment-error').textContent()).toMatch(/phone/i);
      expect(await page.getByLabel('Phone number, in international format').inputValue()).toBe('0971234567');
      // A Kenyan number for a Zambian provider.
      await page.getByLabel('Phone number, in international format').fill('+254712345678');
      await page.getByRole('button', { name: /^Pay/ }).click();
      await page.getByTestId('payment-error').filter({ hasText: /MTN_MOMO_ZMB|country|provider/i }).waitFor();
      expect(page.url()).toBe(invoice.payment_url);
    } finally {
      await page.close();
    }
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.total).toBe(0);
  });

  it('refuses a post without the CSRF token or from another origin, and redirects a good one to the sandbox payer page', async () => {
    const invoice = await finalizedInvoice(500);
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(invoice.payment_url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
    const fields = { provider: 'MTN_MOMO_ZMB', phone_number: SANDBOX_MAGIC_NUMBERS.succeed };
    const shown = await fetch(invoice.payment_url);
    const cookie = shown.headers.get('set-cookie')!.split(';')[0];
    const csrf = /name="csrf" value="([^"]+)"/.exec(await shown.text())![1];
    expect((await post(fields, { cookie })).status).toBe(403);
    expect((await post({ ...fields, csrf: `${csrf.slice(1)}x` }, { cookie })).status).toBe(403);
    expect((await post({ ...fields, csrf }, { cookie, origin: 'https://evil.example' })).status).toBe(403);
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.total).toBe(0);
    const accepted = await post({ ...fields, csrf }, { cookie, origin: mesh.baseUrl });
    expect([accepted.status, accepted.headers.get('location')]).toEqual([303, expect.stringMatching(new RegExp(`^${mesh.baseUrl}/sandbox/pay/[A-Za-z0-9_-]{43}$`))]);
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body).toMatchObject({ total: 1, data: [{ status: 'pending', livemode: false }] });
  });

  it("answers 410 for a voided invoice's link, and 404 for an unknown token or the invoice id", async () => {
    const invoice = await finalizedInvoice(800);
    expect((await call('POST', `/v1/invoices/${invoice.id}/void`)).status).toBe(200);
    const voided = await fetch(invoice.payment_url);
    expect([voided.status, voided.headers.get('cache-control')]).toEqual([410, 'no-store']);
    expect(await voided.text()).toContain('no longer payable');
    const token = invoice.payment_url.split('/').pop()!;
    for (const url of [`${mesh.baseUrl}/pay/${token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`, `${mesh.baseUrl}/pay/${invoice.id}`]) {
      const response = await fetch(url);
      expect([url, response.status]).toEqual([url, 404]);
      expect(await response.text()).not.toContain(invoice.number);
    }
  });
});

describe('a past_due subscription', () => {
  it('comes back to active (subscription.activated) when its invoice is paid', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/activated`, events: ['subscription.activated'] });
    const customer = await call('POST', '/v1/customers', { name: 'Chanda Phiri', email: 'chanda@example.com' });
    const plan = await call('POST', '/v1/plans', { name: 'Home 50', pricing_model: 'flat_rate', amount_monthly: 35_000, currency: 'zmw' });
    const subscription = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan: plan.body.id, billing_interval: 'monthly' });
    expect(subscription.status).toBe(201);
    const invoice = await eventually(async () => {
      const { body } = await call('GET', `/v1/invoices?subscription=${subscription.body.id}`);
      return body.data?.[0];
    }, 30_000, 'the first invoice of the subscription');
    // Dunning moves a subscription to past_due (dunning-refunds.mesh.spec.ts walks it there); here it is set directly.
    await queryDatabase(mesh.databaseUrls.subscription, "UPDATE subscriptions SET status = 'past_due' WHERE id = $1", [subscription.body.id]);

    const { body: payment } = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
    const page = await browser.newPage();
    try {
      expect(payment.status).toBe('pending');
      await page.goto(payment.redirectUrl);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/pay\/return\//, { timeout: 10_000 }).catch(async (error: Error) => {
        throw new Error(`${error.message}\nat ${page.url()}:\n${await page.content()}`);
      });
    } finally {
      await page.close();
    }
    await eventually(async () => (await call('GET', `/v1/subscriptions/${subscription.body.id}`)).body.status === 'active', 30_000, 'the subscription active again');
    const [delivery] = await eventually(async () => {
      const got = await receiver.received('/activated');
      return got.length > 0 ? got : undefined;
    }, 60_000, 'the subscription.activated webhook');
    expect(constructEvent(delivery.body, delivery.headers, endpoint.body.secret)).toMatchObject({ type: 'subscription.activated', data: { object: { id: subscription.body.id, status: 'active' } } });
  });
});
