import { catalogue, messages } from '@recur/i18n';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { collectPageErrors, launchChromium, overflow, screenshot, seriousAccessibilityViolations } from './browser';
import { api, approveSandboxPayment, eventually, type Mesh, meshForFile } from './mesh';

/**
 * A payment method saved from the pages (docs/api/payment-methods.md#saved-from-the-pages), in real
 * Chromium at a phone's width: the payer ticks "save this number" on the invoice's hosted payment
 * page or a sales link's checkout, pays with a sandbox magic number, and the number becomes the
 * customer's default payment method (`consent.source` `payment_page` or `checkout`), which then
 * pays a `charge_automatically` invoice with no page opened. Unticked, or a payment that fails:
 * nothing is saved. The payer pages on the way speak the customer's language (French here).
 */
let mesh: Mesh;
let call: ReturnType<typeof api>;
let browser: Browser;

meshForFile('Kafue Solar', async (started) => {
  ({ mesh, call } = started);
  browser = await launchChromium();
});
afterAll(() => browser?.close(), 30_000);

const ENGLISH_KEYS = Object.keys(catalogue('en')!);
const rawKeysIn = (text: string) => ENGLISH_KEYS.filter((key) => text.includes(key));
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

/** A phone in Chromium: 375 px wide; every page on the way is checked for overflow, raw keys, accessibility and console errors. */
async function onPhone<T>(run: (page: Page, checked: () => Promise<void>) => Promise<T>): Promise<T> {
  const context: BrowserContext = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const errors = collectPageErrors(page);
  const checked = async () => {
    expect([page.url(), await overflow(page)]).toEqual([page.url(), []]);
    expect([page.url(), rawKeysIn((await page.locator('body').textContent())!)]).toEqual([page.url(), []]);
    expect([page.url(), await seriousAccessibilityViolations(page)]).toEqual([page.url(), []]);
    expect(errors).toEqual([]);
  };
  try {
    return await run(page, checked);
  } finally {
    await context.close();
  }
}

async function newCustomer(fields: Record<string, unknown> = {}): Promise<string> {
  const customer = await call('POST', '/v1/customers', { name: 'Mwila Chanda', email: `mwila-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`, ...fields });
  expect(customer.status).toBe(201);
  return customer.body.id;
}

async function openInvoice(customer: string, amount: number, fields: Record<string, unknown> = {}) {
  const invoice = await call('POST', '/v1/invoices', { customer, amount, currency: 'zmw', description: 'Solar lease, March', status: 'open', ...fields });
  expect(invoice.status).toBe(201);
  return invoice.body as { id: string; payment_url: string; number: string };
}

const methodsOf = async (customer: string) => (await call('GET', `/v1/customers/${customer}/payment-methods`)).body.data as Record<string, unknown>[];

const invoiceIn = (id: string, status: string) =>
  eventually(async () => {
    const current = (await call('GET', `/v1/invoices/${id}`)).body;
    return current.status === status ? current : undefined;
  }, 60_000, `invoice ${id} ${status}`);

/** Pays `invoice` on its hosted page in `locale` (its customer's), ticking the box or not, and Approves on the sandbox payer page. */
async function payOnPaymentPage(invoice: { payment_url: string }, phone: string, save: boolean, locale = 'en'): Promise<void> {
  const w = messages(locale);
  await onPhone(async (page, checked) => {
    expect((await page.goto(invoice.payment_url))!.status()).toBe(200);
    const box = page.getByLabel(w.t('page.save_method'));
    expect(await box.isChecked()).toBe(false);
    await page.getByLabel(w.t('page.invoice.provider')).selectOption('MTN_MOMO_ZMB');
    await page.getByLabel(w.t('page.invoice.phone_number')).fill(phone);
    if (save) await box.check();
    await checked();
    await page.locator('form button[type=submit]').click();
    await page.waitForURL(/\/sandbox\/pay\//);
    await page.getByRole('button', { name: w.t('payer.approve') }).click();
    await page.waitForURL(/\/pay\/return\//);
    await checked();
  });
}

/** The payment page's form posted as the page's own (its cookie and CSRF token), paying with …000001; answers where it sends the payer. */
async function postPaymentForm(paymentUrl: string, fields: Record<string, string>): Promise<string> {
  const form = await fetch(paymentUrl);
  const cookie = form.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1];
  const posted = await fetch(paymentUrl, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ csrf, provider: 'MTN_MOMO_ZMB', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, ...fields }).toString(),
  });
  expect(posted.status).toBe(303);
  return posted.headers.get('location')!;
}

describe('payment methods saved from the pages', () => {
  it('saves the number ticked on the French payment page once the payment succeeds (payment_page, default); a charge_automatically invoice is then paid with no page opened', async () => {
    const customer = await newCustomer({ preferred_locale: 'fr' });
    const invoice = await openInvoice(customer, 2_750);
    await onPhone(async (page, checked) => {
      expect((await page.goto(invoice.payment_url))!.status()).toBe(200);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      const box = page.getByLabel('Enregistrer ce numéro pour les prochains paiements automatiques');
      // Never ticked for the payer.
      expect(await box.isChecked()).toBe(false);
      await page.getByLabel('Opérateur de mobile money').selectOption('MTN_MOMO_ZMB');
      await page.getByLabel('Numéro de téléphone, au format international').fill(SANDBOX_MAGIC_NUMBERS.succeed);
      await box.check();
      await checked();
      await screenshot(page, 'invoice-payment-page-save-fr-phone');
      await page.getByRole('button', { name: /^Payer 27,50/ }).click();

      // The sandbox payer page, in the customer's language.
      await page.waitForURL(/\/sandbox\/pay\//);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      expect(await page.locator('h1').textContent()).toBe('Approuver ce paiement');
      expect(plain((await page.getByTestId('amount').textContent())!)).toBe('27,50 ZMW');
      const payer = (await page.locator('body').textContent())!;
      expect(payer).toContain('Approuver réussira pour ce numéro.');
      expect(payer).not.toMatch(/Approve this payment|Phone number|Test numbers/);
      await checked();
      await screenshot(page, 'sandbox-payer-page-fr-phone');
      // Nothing is saved before the payment succeeds.
      expect(await methodsOf(customer)).toEqual([]);
      await page.getByRole('button', { name: 'Approuver' }).click();

      await page.waitForURL(/\/pay\/return\//);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      expect(await page.getByTestId('payment-status').textContent()).toBe('Paiement reçu — merci.');
      expect(await page.locator('h1').textContent()).toBe(`Facture ${invoice.number}`);
      await checked();
    });
    await invoiceIn(invoice.id, 'paid');
    const [saved, ...others] = await methodsOf(customer);
    expect(others).toEqual([]);
    expect(saved).toMatchObject({
      object: 'payment_method', customer, type: 'mobile_money', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB', default: true,
      consent: { source: 'payment_page', given_at: expect.any(Number) },
    });

    // Saving again (another invoice paid on its page with the box ticked) answers the method saved before.
    const second = await openInvoice(customer, 1_000);
    await payOnPaymentPage(second, SANDBOX_MAGIC_NUMBERS.succeed, true, 'fr');
    await invoiceIn(second.id, 'paid');
    expect((await methodsOf(customer)).map((method) => method.id)).toEqual([saved.id]);

    // The saved number pays an automatically collected invoice: nobody opens a page.
    const automatic = await openInvoice(customer, 4_500, { collection_method: 'charge_automatically' });
    expect(await invoiceIn(automatic.id, 'paid')).toMatchObject({ amount_paid: 4_500, amount_due: 0 });
    expect((await call('GET', `/v1/payments?invoice=${automatic.id}`)).body.data).toMatchObject([{ status: 'succeeded', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' }]);
  });

  it('saves the number ticked on a sales link checkout as the new customer\'s default method (checkout)', async () => {
    const plan = await call('POST', '/v1/plans', { name: 'Solar panel', pricing_model: 'flat_rate', amount_monthly: 12_000, currency: 'zmw' });
    const link = await call('POST', '/v1/sales-links', { kind: 'one_time', title: 'Solar panel install', plan_id: plan.body.id, billing_interval: 'monthly' });
    expect(link.status).toBe(201);
    await onPhone(async (page, checked) => {
      expect((await page.goto(link.body.url))!.status()).toBe(200);
      await page.getByLabel('Name').fill('Bwalya Mumba');
      await page.getByLabel('E-mail').fill('bwalya@example.com');
      await page.getByLabel('Mobile money number').fill(SANDBOX_MAGIC_NUMBERS.succeed);
      await page.getByLabel('Mobile money provider').selectOption('MTN_MOMO_ZMB');
      const box = page.getByLabel('Save this number for future automatic payments');
      expect(await box.isChecked()).toBe(false);
      await box.check();
      await checked();
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(/\/sandbox\/pay\//);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForURL(/\/pay\/return\//);
    });
    const [sale] = (await call('GET', `/v1/sales-links/${link.body.id}/checkouts`)).body.data;
    await invoiceIn(sale.invoice, 'paid');
    expect(await methodsOf(sale.customer)).toMatchObject([
      { customer: sale.customer, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB', default: true, consent: { source: 'checkout' } },
    ]);
  });

  it('saves nothing when the box is not ticked', async () => {
    const customer = await newCustomer();
    const invoice = await openInvoice(customer, 2_000);
    await payOnPaymentPage(invoice, SANDBOX_MAGIC_NUMBERS.succeed, false);
    await invoiceIn(invoice.id, 'paid');
    expect(await methodsOf(customer)).toEqual([]);
  });

  it('saves nothing when the payment fails, box ticked (a number that cannot pay is never kept)', async () => {
    const customer = await newCustomer();
    const invoice = await openInvoice(customer, 2_000);
    await payOnPaymentPage(invoice, SANDBOX_MAGIC_NUMBERS.fail, true);
    await invoiceIn(invoice.id, 'failed');
    expect((await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.data).toMatchObject([{ status: 'failed', failure_code: 'insufficient_funds' }]);
    expect(await methodsOf(customer)).toEqual([]);
  });

  it('saves the number of a pending payment when the payer comes back and submits the same number with the box ticked', async () => {
    const customer = await newCustomer();
    const invoice = await openInvoice(customer, 2_000);
    const first = await postPaymentForm(invoice.payment_url, { save_method: '' });
    // Back on the page, the box ticked this time: the pending payment answers, and now saves on success.
    const second = await postPaymentForm(invoice.payment_url, { save_method: 'yes' });
    expect(second).toBe(first);
    await approveSandboxPayment(mesh, second);
    await invoiceIn(invoice.id, 'paid');
    expect(await methodsOf(customer)).toMatchObject([{ phone_number: SANDBOX_MAGIC_NUMBERS.succeed, default: true, consent: { source: 'payment_page' } }]);
  });

  it('takes only a ticked box as consent (another value of the field saves nothing) and shows no box on a trial checkout, where nothing is paid', async () => {
    // The form's field is a checkbox: only `yes` ticks it; anything else is not consent.
    const customer = await newCustomer();
    const invoice = await openInvoice(customer, 2_000);
    await approveSandboxPayment(mesh, await postPaymentForm(invoice.payment_url, { save_method: 'on' }));
    await invoiceIn(invoice.id, 'paid');
    expect(await methodsOf(customer)).toEqual([]);

    const plan = await call('POST', '/v1/plans', { name: 'Solar home kit', pricing_model: 'flat_rate', amount_monthly: 4_500, currency: 'zmw' });
    const trial = await call('POST', '/v1/sales-links', { kind: 'plan', title: 'Try solar', plan_id: plan.body.id, billing_interval: 'monthly', trial_days: 14 });
    const page = await (await fetch(trial.body.url)).text();
    expect(page).not.toContain('name="save_method"');
  });
});
