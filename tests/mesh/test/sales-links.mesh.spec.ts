import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { constructEvent } from '@recur/webhooks';
import type { Browser } from 'playwright-core';
import { collectPageErrors, launchChromium, newContext, screenshot, seriousAccessibilityViolations } from './browser';
import { api, eventually, type Keys, type Mesh, startMesh } from './mesh';

/**
 * Selling through a sales link, as a buyer would, in real Chromium against a real mesh: the
 * link made through the API, its hosted checkout page (offer priced by the subscription service),
 * the form, the sandbox payer page, Approve, the return page; then the invoice paid (raised with
 * billing_reason sales_link), the subscription active, the buyer on the link's success URL (a
 * real local server) and the sale listed as completed under the link; a trial sale, which pays
 * nothing and goes to the success URL at once; a one_time sale, paid on a one-off invoice with no
 * subscription. Also: one sale for a double submit, the CSRF walls, 410 for an inactive link, 409 for a
 * no-op activate or deactivate and 404 for another app's link.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let browser: Browser;
let call: ReturnType<typeof api>;
let planId: string;

beforeAll(async () => {
  [mesh, receiver, browser] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver(), launchChromium()]);
  ({ keys } = await mesh.createAccount('Lusaka Fibre'));
  call = api(mesh, keys.test);
  const plan = await call('POST', '/v1/plans', { name: 'Fibre 50', pricing_model: 'flat_rate', amount_monthly: 45_000, currency: 'zmw', billing_intervals: ['monthly', 'yearly'] });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
}, 300_000);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop(), browser?.close()]);
}, 60_000);

async function createLink(fields: Record<string, unknown> = {}) {
  const link = await call('POST', '/v1/sales-links', { kind: 'plan', title: 'Fibre 50 at home', plan_id: planId, billing_interval: 'monthly', ...fields });
  expect(link.status).toBe(201);
  return link.body as { id: string; url: string; active: boolean };
}

/** The page's form as a browser would post it: its cookie, CSRF token and one-time checkout token. */
async function openForm(url: string) {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  const page = await response.text();
  return {
    cookie: response.headers.get('set-cookie')!.split(';')[0],
    csrf: /name="csrf" value="([^"]+)"/.exec(page)![1],
    checkoutToken: /name="checkout_token" value="([^"]+)"/.exec(page)![1],
  };
}

function post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
}

const buyer = (email: string) => ({ name: 'Chanda Mulenga', email, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });

describe('sales links', () => {
  it('sells a plan in Chromium: checkout page, sandbox payer page, Approve; the invoice is paid, the subscription active and the sale completed', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/created`, events: ['invoice.created'] });
    // The seller's own site: a real local HTTP server (the receiver records every request, pages included).
    const successUrl = `${receiver.url}/shop/welcome?checkout={CHECKOUT_ID}`;
    const link = await createLink({ success_url: successUrl });
    expect(link).toMatchObject({ object: 'sales_link', kind: 'plan', active: true, plan_id: planId, billing_interval: 'monthly', trial_days: 0, success_url: successUrl });
    expect(link.url).toMatch(new RegExp(`^${mesh.baseUrl}/buy/[A-Za-z0-9_-]{43}$`));
    expect((await call('GET', `/v1/sales-links/${link.id}`)).body).toEqual(link);
    expect((await call('GET', '/v1/sales-links?limit=1')).body).toMatchObject({ object: 'list', data: [{ id: link.id }], has_more: false });

    const context = await newContext(browser);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      await page.goto(link.url);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Fibre 50 at home');
      expect(await page.getByTestId('plan-name').textContent()).toBe('Fibre 50');
      expect(await page.getByTestId('price').textContent()).toBe('ZMW\u00a0450.00');
      expect(await page.getByTestId('interval').textContent()).toBe('per month');
      const html = await page.content();
      expect(html).not.toMatch(/recur_(test|live)_(sk|rk|pk)_|_sk_/);
      expect(html).not.toContain('Promotion code');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'checkout');
      await page.getByLabel('Name').fill('Chanda Mulenga');
      await page.getByLabel('E-mail').fill('chanda@example.com');
      await page.getByLabel('Mobile money number').fill(SANDBOX_MAGIC_NUMBERS.succeed);
      await page.getByLabel('Mobile money provider').selectOption('MTN_MOMO_ZMB');
      // The checkout page logs nothing; nor does the payer page (checked below).
      expect(errors).toEqual([]);
      await page.getByRole('button', { name: 'Pay ZMW\u00a0450.00' }).click();
      await page.waitForURL(/\/sandbox\/pay\//);
      expect(await page.getByTestId('amount').textContent()).toBe('ZMW\u00a0450.00');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'sandbox-payer-page');
      expect(errors).toEqual([]);
      // Approve settles the payment; the return page sees it paid and sends the buyer on to the link's success URL.
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(new RegExp(`^${receiver.url}/shop/welcome\\?checkout=chk_`));
    } finally {
      await context.close();
    }

    const [sale] = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body.data;
    expect(sale).toMatchObject({ object: 'sales_link_checkout', sales_link: link.id, customer: expect.stringMatching(/^cus_/), subscription: expect.stringMatching(/^sub_/), invoice: expect.stringMatching(/^in_/) });
    // The browser arrived at the seller's server, naming this sale.
    expect((await receiver.received('/shop/welcome')).map((request) => request.query)).toEqual([`?checkout=${sale.id}`]);
    const invoice = await eventually(async () => {
      const current = await call('GET', `/v1/invoices/${sale.invoice}`);
      return current.body.status === 'paid' ? current.body : undefined;
    }, 20_000, 'the first invoice paid');
    expect(invoice).toMatchObject({ billing_reason: 'sales_link', subscription: sale.subscription, customer: sale.customer, total: 45_000, currency: 'zmw' });
    expect((await call('GET', `/v1/subscriptions/${sale.subscription}`)).body).toMatchObject({ status: 'active', plan: planId, customer: sale.customer });
    expect((await call('GET', `/v1/customers/${sale.customer}`)).body).toMatchObject({ name: 'Chanda Mulenga', email: 'chanda@example.com' });
    const completed = await eventually(async () => {
      const listed = await call('GET', `/v1/sales-links/${link.id}/checkouts`);
      return listed.body.data[0]?.status === 'completed' ? listed.body : undefined;
    }, 30_000, 'the checkout completed');
    expect(completed).toMatchObject({ object: 'list', total: 1, data: [{ id: sale.id, status: 'completed', completed_at: expect.any(Number), created: expect.any(Number) }] });

    const delivery = await eventually(async () => {
      const got = await receiver.received('/created');
      return got.find((item) => JSON.parse(item.body).data.object.id === sale.invoice);
    }, 60_000, 'the invoice.created webhook');
    const event = constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as { type: string; data: { object: { billing_reason: string }; source: string } };
    expect(event).toMatchObject({ type: 'invoice.created', data: { source: 'sales_link', object: { billing_reason: 'sales_link' } } });

    // A second purchase with the same e-mail reuses the customer.
    const form = await openForm(link.url);
    const again = await post(link.url, { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('CHANDA@example.com') }, { cookie: form.cookie, origin: mesh.baseUrl });
    expect(again.status).toBe(303);
    const sales = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body;
    expect(sales.total).toBe(2);
    expect(sales.data[0].customer).toBe(sale.customer);
  });

  it('sells a trial in Chromium without a payment: the subscription trials, the buyer lands on the success URL and the sale is completed', async () => {
    const successUrl = `${receiver.url}/shop/trial/{CHECKOUT_ID}`;
    const link = await createLink({ title: 'Try Fibre 50', trial_days: 14, success_url: successUrl });
    const context = await newContext(browser);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      await page.goto(link.url);
      expect(await page.getByTestId('trial').textContent()).toContain('14-day free trial');
      await page.getByLabel('Name').fill('Bwalya Phiri');
      await page.getByLabel('E-mail').fill('bwalya@example.com');
      await page.getByLabel('Mobile money number').fill(SANDBOX_MAGIC_NUMBERS.succeed);
      expect(errors).toEqual([]);
      await page.getByRole('button', { name: 'Start the trial' }).click();
      await page.waitForURL(new RegExp(`^${receiver.url}/shop/trial/chk_`));
    } finally {
      await context.close();
    }
    const listed = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body;
    expect(listed).toMatchObject({ total: 1, data: [{ status: 'completed', invoice: null, completed_at: expect.any(Number) }] });
    const [sale] = listed.data;
    expect((await receiver.received(`/shop/trial/${sale.id}`))).toHaveLength(1);
    expect((await call('GET', `/v1/subscriptions/${sale.subscription}`)).body).toMatchObject({ status: 'trialing', plan: planId, customer: sale.customer });
    // Nothing was billed or charged.
    expect((await call('GET', `/v1/invoices?subscription=${sale.subscription}`)).body.total).toBe(0);
  });

  it('leaves a paid buyer on the return page when the link has no success URL, and never redirects from the request', async () => {
    const link = await createLink();
    const form = await openForm(link.url);
    const sold = await post(link.url, { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('stay@example.com') }, { cookie: form.cookie, origin: mesh.baseUrl });
    const payerPage = sold.headers.get('location')!;
    const token = payerPage.split('/').pop()!;
    const payer = await fetch(payerPage);
    const approve = await post(payerPage, { csrf: /name="csrf" value="([^"]+)"/.exec(await payer.text())![1], decision: 'approve' }, { cookie: payer.headers.get('set-cookie')!.split(';')[0], origin: mesh.baseUrl });
    expect([approve.status, approve.headers.get('location')]).toEqual([303, `/pay/return/${token}`]);
    // A target named in the URL is ignored: only the link's own success URL is ever followed.
    const returned = await fetch(`${mesh.baseUrl}/pay/return/${token}?success_url=https://evil.example/&redirect=https://evil.example/`, { redirect: 'manual' });
    expect(returned.status).toBe(200);
    expect(await returned.text()).toContain('data-status="succeeded"');

    const context = await newContext(browser);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      await page.goto(`${mesh.baseUrl}/pay/return/${token}`);
      expect(await page.getByTestId('payment-status').textContent()).toBe('Payment received — thank you.');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
      await screenshot(page, 'payment-return-page');
    } finally {
      await context.close();
    }
  });

  it('makes one sale for a double submit of the same form', async () => {
    const link = await createLink();
    const form = await openForm(link.url);
    const fields = { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('double@example.com') };
    const headers = { cookie: form.cookie, origin: mesh.baseUrl };
    const [first, second] = await Promise.all([post(link.url, fields, headers), post(link.url, fields, headers)]);
    expect([first.status, second.status]).toEqual([303, 303]);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(first.headers.get('location')).toMatch(/\/sandbox\/pay\//);
    const sales = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body;
    expect(sales.total).toBe(1);
    expect((await call('GET', '/v1/customers?email=double@example.com')).body.total).toBe(1);
    expect((await call('GET', `/v1/subscriptions?customer=${sales.data[0].customer}`)).body.total).toBe(1);
  });

  it('takes a promotion code when the link allows it: a bad code re-renders the form with a fresh token, a good one discounts the first invoice', async () => {
    const coupon = await call('POST', '/v1/coupons', { name: 'Half off', type: 'percentage', value: 50, duration: 'once' });
    expect((await call('POST', '/v1/promotion-codes', { code: 'HALF50', coupon: coupon.body.id })).status).toBe(201);
    const link = await createLink({ allow_promotion_codes: true });
    const form = await openForm(link.url);
    const headers = { cookie: form.cookie, origin: mesh.baseUrl };
    const refused = await post(link.url, { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('promo@example.com'), promotion_code: 'NOPE' }, headers);
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(page).toContain('data-testid="checkout-error"');
    expect(page).toContain('id="promotion_code"');
    const freshToken = /name="checkout_token" value="([^"]+)"/.exec(page)![1];
    expect(freshToken).not.toBe(form.checkoutToken);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1];
    const cookie = refused.headers.get('set-cookie')!.split(';')[0];
    const sold = await post(link.url, { csrf, checkout_token: freshToken, ...buyer('promo@example.com'), promotion_code: 'half50' }, { cookie, origin: mesh.baseUrl });
    expect(sold.status).toBe(303);
    const [sale] = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body.data;
    expect((await call('GET', `/v1/invoices/${sale.invoice}`)).body).toMatchObject({ billing_reason: 'sales_link', subtotal: 45_000, total: 22_500 });
  });

  it('refuses a post without the CSRF token or from another origin, and makes no sale', async () => {
    const link = await createLink();
    const form = await openForm(link.url);
    const fields = { checkout_token: form.checkoutToken, ...buyer('csrf@example.com') };
    expect((await post(link.url, fields, { cookie: form.cookie })).status).toBe(403);
    expect((await post(link.url, { ...fields, csrf: 'forged' }, { cookie: form.cookie })).status).toBe(403);
    expect((await post(link.url, { ...fields, csrf: form.csrf }, { cookie: form.cookie, origin: 'https://evil.example' })).status).toBe(403);
    expect((await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body.total).toBe(0);
    expect((await call('GET', '/v1/customers?email=csrf@example.com')).body.total).toBe(0);
  });

  it('shows an inactive link as no longer available (410), and sells again once activated', async () => {
    const link = await createLink();
    const form = await openForm(link.url);
    expect((await call('POST', `/v1/sales-links/${link.id}/deactivate`)).body).toMatchObject({ id: link.id, active: false });
    const context = await newContext(browser);
    const page = await context.newPage();
    try {
      const response = await page.goto(link.url);
      expect(response!.status()).toBe(410);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This offer is no longer available');
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
    const late = await post(link.url, { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('late@example.com') }, { cookie: form.cookie, origin: mesh.baseUrl });
    expect(late.status).toBe(410);
    expect((await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body.total).toBe(0);
    expect((await call('POST', `/v1/sales-links/${link.id}/activate`)).body).toMatchObject({ active: true });
    expect((await fetch(link.url)).status).toBe(200);
  });

  it('sells one_time: a one-off invoice (billing_reason sales_link) paid on the sandbox payer page completes the sale; no subscription', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/once-created`, events: ['invoice.created'] });
    const successUrl = `${receiver.url}/shop/once/{CHECKOUT_ID}`;
    const link = await createLink({ kind: 'one_time', title: 'One month of Fibre 50', success_url: successUrl });
    expect(link).toMatchObject({ kind: 'one_time', trial_days: 0, allow_promotion_codes: false });
    const shown = await (await fetch(link.url)).text();
    expect(shown).toContain('<span data-testid="interval">one-time payment</span>');
    expect(shown).toContain('ZMW\u00a0450.00');

    const form = await openForm(link.url);
    const fields = { csrf: form.csrf, checkout_token: form.checkoutToken, ...buyer('once@example.com') };
    const headers = { cookie: form.cookie, origin: mesh.baseUrl };
    // A double submit of the form is one sale, one invoice, one payment page.
    const [sold, again] = await Promise.all([post(link.url, fields, headers), post(link.url, fields, headers)]);
    expect([sold.status, again.status]).toEqual([303, 303]);
    const payerPage = sold.headers.get('location')!;
    expect(payerPage).toMatch(/\/sandbox\/pay\//);
    expect(again.headers.get('location')).toBe(payerPage);
    const listed = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body;
    expect(listed).toMatchObject({ total: 1, data: [{ status: 'open', subscription: null, customer: expect.stringMatching(/^cus_/), invoice: expect.stringMatching(/^in_/) }] });
    const [sale] = listed.data;
    expect((await call('GET', `/v1/invoices?customer=${sale.customer}`)).body.total).toBe(1);
    expect((await call('GET', `/v1/invoices/${sale.invoice}`)).body).toMatchObject({
      status: 'open', billing_reason: 'sales_link', subscription: null, customer: sale.customer, total: 45_000, currency: 'zmw', payment_url: expect.any(String),
    });

    // The buyer approves on the sandbox payer page; the return page sends them to the link's success URL once paid.
    const payer = await fetch(payerPage);
    const approve = await post(payerPage, { csrf: /name="csrf" value="([^"]+)"/.exec(await payer.text())![1], decision: 'approve' }, { cookie: payer.headers.get('set-cookie')!.split(';')[0], origin: mesh.baseUrl });
    expect(approve.status).toBe(303);
    const landed = await eventually(async () => {
      const returned = await fetch(new URL(approve.headers.get('location')!, mesh.baseUrl), { redirect: 'manual' });
      return returned.status === 303 ? returned.headers.get('location') : undefined;
    }, 20_000, 'the return page sending the buyer on');
    expect(landed).toBe(`${receiver.url}/shop/once/${sale.id}`);

    // The payment settles the invoice through payments' event: paid shortly after.
    await eventually(async () => ((await call('GET', `/v1/invoices/${sale.invoice}`)).body.status === 'paid' ? true : undefined), 20_000, 'the one-off invoice paid');
    const completed = await eventually(async () => {
      const current = (await call('GET', `/v1/sales-links/${link.id}/checkouts`)).body.data[0];
      return current.status === 'completed' ? current : undefined;
    }, 30_000, 'the one_time checkout completed');
    expect(completed).toMatchObject({ id: sale.id, subscription: null, invoice: sale.invoice, completed_at: expect.any(Number) });
    expect((await call('GET', `/v1/subscriptions?customer=${sale.customer}`)).body.total).toBe(0);
    const delivery = await eventually(async () => (await receiver.received('/once-created')).find((item) => JSON.parse(item.body).data.object.id === sale.invoice), 60_000, 'the invoice.created webhook');
    expect(constructEvent(delivery.body, delivery.headers, endpoint.body.secret)).toMatchObject({ type: 'invoice.created', data: { source: 'sales_link', object: { billing_reason: 'sales_link', subscription: null } } });

    const error = (response: { status: number; body: { error: { code: string; param?: string } } }) => [response.status, response.body.error.code, response.body.error.param];
    const oneTime = { kind: 'one_time', title: 'x', plan_id: planId, billing_interval: 'monthly' };
    expect(error(await call('POST', '/v1/sales-links', { ...oneTime, trial_days: 7 }))).toEqual([400, 'parameter_invalid', 'trial_days']);
    expect(error(await call('POST', '/v1/sales-links', { ...oneTime, allow_promotion_codes: true }))).toEqual([400, 'parameter_invalid', 'allow_promotion_codes']);
  });

  it('answers 409 for a no-op activate or deactivate, 404 for another app\'s link, 400 for a bad link', async () => {
    const link = await createLink();
    const error = (response: { status: number; body: { error: { code: string; param?: string } } }) => [response.status, response.body.error.code, response.body.error.param];
    expect(error(await call('POST', `/v1/sales-links/${link.id}/activate`))).toEqual([409, 'sales_link_already_active', undefined]);
    expect((await call('POST', `/v1/sales-links/${link.id}/deactivate`)).status).toBe(200);
    expect(error(await call('POST', `/v1/sales-links/${link.id}/deactivate`))).toEqual([409, 'sales_link_already_inactive', undefined]);

    const live = api(mesh, keys.live);
    const other = api(mesh, (await mesh.createAccount('Other Co')).keys.test);
    for (const caller of [live, other]) {
      expect((await caller('GET', `/v1/sales-links/${link.id}`)).status).toBe(404);
      expect((await caller('GET', `/v1/sales-links/${link.id}/checkouts`)).status).toBe(404);
      expect((await caller('POST', `/v1/sales-links/${link.id}/activate`)).status).toBe(404);
    }
    expect(error(await call('POST', '/v1/sales-links', { kind: 'bundle', title: 'x', plan_id: planId, billing_interval: 'monthly' }))).toEqual([400, 'parameter_invalid', 'kind']);
    expect(error(await call('POST', '/v1/sales-links', { kind: 'plan', title: 'x', plan_id: planId, billing_interval: 'quarterly' }))).toEqual([400, 'parameter_invalid', 'billing_interval']);
    // Not one of the intervals at all: the subscription service's refusal, relayed by the gateway.
    expect(error(await call('POST', '/v1/sales-links', { kind: 'plan', title: 'x', plan_id: planId, billing_interval: 'weekly' }))).toEqual([400, 'parameter_invalid', 'billing_interval']);
    expect(error(await call('POST', '/v1/sales-links', { kind: 'plan', title: 'x', plan_id: 'plan_nope', billing_interval: 'monthly' }))).toEqual([400, 'resource_missing', 'plan']);
    expect((await fetch(`${mesh.baseUrl}/buy/not-a-token`)).status).toBe(404);
  });
});
