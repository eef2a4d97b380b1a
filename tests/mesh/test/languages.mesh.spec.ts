import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogue } from '@recur/i18n';
import type { Browser } from 'playwright-core';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { collectPageErrors, launchChromium, overflow, screenshot, seriousAccessibilityViolations } from './browser';
import { api, eventually, type Keys, type Mesh, MESH_START_TIMEOUT_MS, startMesh } from './mesh';

/**
 * Languages as docs/localization.md tells them, through /v1: a customer's preferred_locale and the
 * account's default_locale at the door, a taxed French invoice's PDF read back with pdftotext, and
 * its hosted payment page in Chromium at a phone's width (375 px): French, and nothing overflows.
 */
let mesh: Mesh;
let keys: Keys;
let browser: Browser;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  [mesh, browser] = await Promise.all([startMesh(), launchChromium()]);
  ({ keys } = await mesh.createAccount('Teranga'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([mesh?.stop(), browser?.close()]);
}, 60_000);

const ENGLISH_KEYS = Object.keys(catalogue('en')!);
/** Catalogue keys printed as they are: a message the code asked for and no catalogue had. */
const rawKeysIn = (text: string) => ENGLISH_KEYS.filter((key) => text.includes(key));
/** French spacing (U+00A0, U+202F) as plain spaces, for readable expectations. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

async function invoicePdf(invoiceId: string): Promise<{ text: string; file: string }> {
  const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoiceId}/pdf`, { headers: { 'x-api-key': keys.test } });
  expect(response.status).toBe(200);
  const file = join(mkdtempSync(join(tmpdir(), 'recur-lang-pdf-')), 'invoice.pdf');
  writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
  return { text: plain(execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })), file };
}

/** With RECUR_SCREENSHOTS=<dir>, the PDF's first page as <dir>/<name>.png (poppler's pdftoppm, 80 dpi). */
function pdfScreenshot(file: string, name: string): void {
  const dir = process.env.RECUR_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', file, join(dir, name)]);
}

describe('languages', () => {
  it('takes preferred_locale on customers and default_locale on the account, only locales Recur has a catalogue for', async () => {
    const created = await call('POST', '/v1/customers', { name: 'Awa Ndiaye', email: 'awa@example.com', preferred_locale: 'fr' });
    expect([created.status, created.body.preferred_locale]).toEqual([201, 'fr']);
    expect((await call('POST', '/v1/customers', { name: 'Ada', email: 'ada@example.com' })).body.preferred_locale).toBeNull();
    for (const preferred_locale of ['de', 'FR', 'fr-FR', 7]) {
      const refused = await call('POST', '/v1/customers', { name: 'A', email: 'a@example.com', preferred_locale });
      expect([preferred_locale, refused.status, refused.body.error.param]).toEqual([preferred_locale, 400, 'preferred_locale']);
    }
    const cleared = await call('PATCH', `/v1/customers/${created.body.id}`, { preferred_locale: null });
    expect([cleared.status, cleared.body.preferred_locale]).toEqual([200, null]);
    // The buyer's phone (docs/api/customers.md): E.164, null removes it.
    const phoned = await call('PATCH', `/v1/customers/${created.body.id}`, { phone: '+221 77 123 45 67' });
    expect([phoned.status, phoned.body.phone]).toEqual([200, '+221771234567']);
    expect((await call('PATCH', `/v1/customers/${created.body.id}`, { phone: '0771234567' })).body.error.param).toBe('phone');
    expect((await call('PATCH', `/v1/customers/${created.body.id}`, { phone: null })).body.phone).toBeNull();

    expect((await call('GET', '/v1/account')).body.default_locale).toBe('en');
    expect((await call('POST', '/v1/account', { default_locale: 'fr' })).body.default_locale).toBe('fr');
    expect((await call('POST', '/v1/account', { default_locale: 'es' })).body.error.param).toBe('default_locale');
    expect((await call('POST', '/v1/account', { default_locale: null })).body.default_locale).toBe('en');
  });

  it('writes a taxed invoice for a French customer in French: the PDF (pdftotext), the payment page and the customer portal at 375 px, nothing overflowing', async () => {
    await call('POST', '/v1/account', {
      legal_name: 'Teranga Services SARL', tax_id: 'SN 004217', address: { line1: 'Rue 10, Point E', city: 'Dakar', postal_code: '10200', country: 'SN' },
      support_email: 'facturation@teranga.example', brand_color: '#0a5c8a', invoice_footer: 'Paiement par mobile money sous 30 jours.',
    });
    const rate = await call('POST', '/v1/tax-rates', { display_name: 'TVA', percentage: 18, inclusive: true, country: 'SN' });
    expect(rate.status).toBe(201);
    const customer = await call('POST', '/v1/customers', { name: 'Awa Ndiaye', email: 'awa@example.com', preferred_locale: 'fr', address: { city: 'Dakar', country: 'SN' } });
    const invoice = (await call('POST', '/v1/invoices', { customer: customer.body.id, currency: 'xof', status: 'open', due_date: '2026-12-31', lines: [
      { description: 'Abonnement fibre, décembre', amount: 35_400 }, { description: 'Installation', amount: 23_600, quantity: 1 },
    ] })).body;
    expect([invoice.total, invoice.tax]).toEqual([59_000, 9_000]);

    const { text, file } = await invoicePdf(invoice.id);
    for (const expected of ['Teranga Services SARL', "N° d'identification fiscale : SN 004217", 'Facture', 'Numéro de facture', "Date d'échéance", '31 décembre 2026',
      'Facturé à', 'Awa Ndiaye', 'Désignation', 'TVA 18 % incluse', 'Total hors taxes', '50 000 F CFA', '9 000 F CFA', '59 000 F CFA', 'Montant dû', 'Payer en ligne',
      'Une question sur ce document : facturation@teranga.example']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    expect(text).not.toMatch(/Invoice number|Amount due|Bill to|Date due/);
    expect(rawKeysIn(text)).toEqual([]);
    pdfScreenshot(file, 'invoice-pdf-fr');

    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      expect((await page.goto(invoice.payment_url))!.status()).toBe(200);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      expect(plain((await page.locator('h1').textContent())!)).toBe(`Facture ${invoice.number} de Teranga`);
      expect(plain((await page.getByTestId('amount-due').textContent())!)).toBe('59 000 F CFA');
      expect(await page.getByTestId('due-date').textContent()).toBe('31 décembre 2026');
      expect(await page.getByTestId('invoice-status').textContent()).toBe('à payer');
      await page.getByLabel('Opérateur de mobile money').isVisible();
      expect(await page.getByRole('button', { name: /^Payer 59/ }).count()).toBe(1);
      // The seller as its invoices name it: legal name, address, tax id, support contact, brand colour.
      expect(plain((await page.getByTestId('seller-details').textContent())!)).toMatch(/Teranga Services SARL.*Rue 10, Point E.*10200 Dakar.*N° d'identification fiscale : SN 004217/s);
      expect(plain((await page.getByTestId('seller-contact').textContent())!)).toBe('Une question sur ce document : facturation@teranga.example');
      // Runs in the page (a string: this project's types have no DOM).
      expect(await page.evaluate("getComputedStyle(document.querySelector('h1')).color")).toBe('rgb(10, 92, 138)');
      const body = (await page.locator('body').textContent())!;
      expect(body).not.toMatch(/Amount due|Phone number|Mobile-money provider/);
      expect(rawKeysIn(body)).toEqual([]);
      expect(await overflow(page)).toEqual([]);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'invoice-payment-page-fr-phone');
      expect(errors).toEqual([]);

      // The same customer's portal: French, at the same width.
      const session = await call('POST', `/v1/customers/${customer.body.id}/portal-sessions`);
      expect(session.status).toBe(201);
      expect((await page.goto(session.body.url))!.status()).toBe(200);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      expect(await page.locator('h1').textContent()).toBe('Votre compte chez Teranga');
      expect(plain((await page.getByTestId('seller-details').textContent())!)).toMatch(/Teranga Services SARL.*N° d'identification fiscale : SN 004217/s);
      expect(plain((await page.getByTestId('seller-contact').textContent())!)).toContain('facturation@teranga.example');
      for (const heading of ['Vos coordonnées', 'Abonnements', 'Factures']) expect(await page.getByRole('heading', { name: heading }).count()).toBe(1);
      const row = page.locator(`tr[data-invoice-id="${invoice.id}"]`);
      expect(plain((await row.textContent())!)).toContain('59 000 F CFA');
      expect(await row.textContent()).toContain('31 décembre 2026');
      expect(await row.locator('.badge').textContent()).toBe('à payer');
      const portal = (await page.locator('body').textContent())!;
      expect(portal).not.toMatch(/Your details|Subscriptions|No invoices|Save details/);
      expect(rawKeysIn(portal)).toEqual([]);
      expect(await overflow(page)).toEqual([]);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'customer-portal-fr-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows a sales link's checkout in the account's default_locale (the buyer is no customer yet) at 375 px, nothing overflowing", async () => {
    expect((await call('POST', '/v1/account', { default_locale: 'fr' })).body.default_locale).toBe('fr');
    const plan = await call('POST', '/v1/plans', { name: 'Fibre 50', pricing_model: 'flat_rate', amount_monthly: 25_000, currency: 'xof', billing_intervals: ['monthly'] });
    expect(plan.status).toBe(201);
    const link = await call('POST', '/v1/sales-links', { kind: 'plan', title: 'Fibre 50 à la maison', plan_id: plan.body.id, billing_interval: 'monthly', trial_days: 7 });
    expect(link.status).toBe(201);
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      expect((await page.goto(link.body.url))!.status()).toBe(200);
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      expect(plain((await page.getByTestId('price').textContent())!)).toBe('25 000 F CFA');
      expect(await page.getByTestId('interval').textContent()).toBe('par mois');
      expect(await page.getByTestId('trial').textContent()).toBe("Commence par un essai gratuit de 7 jours : rien à payer aujourd'hui.");
      expect(await page.getByRole('button', { name: "Commencer l'essai" }).count()).toBe(1);
      expect(plain((await page.getByTestId('seller-details').textContent())!)).toMatch(/Teranga Services SARL.*N° d'identification fiscale : SN 004217/s);
      const body = (await page.locator('body').textContent())!;
      expect(body).not.toMatch(/per month|Mobile money number|Start the trial/);
      expect(rawKeysIn(body)).toEqual([]);
      expect(await overflow(page)).toEqual([]);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'checkout-fr-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows the sandbox payer page, the return page and their error pages in the customer's language at 375 px, no raw key, nothing overflowing", async () => {
    const customer = await call('POST', '/v1/customers', { name: 'Moussa Diop', email: 'moussa@example.com', preferred_locale: 'fr' });
    const invoice = (await call('POST', '/v1/invoices', { customer: customer.body.id, amount: 1_250, currency: 'zmw', description: 'Location, janvier', status: 'open' })).body;
    const initiated = await call('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.pending, provider: 'MTN_MOMO_ZMB' });
    expect(initiated.status).toBe(201);
    const payerUrl: string = initiated.body.redirectUrl;
    const token = payerUrl.split('/').pop()!;
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    const checked = async (expected: RegExp, { axe = true } = {}) => {
      expect(await page.locator('html').getAttribute('lang')).toBe('fr');
      const body = plain((await page.locator('body').textContent())!);
      expect(body).toMatch(expected);
      expect(rawKeysIn(body)).toEqual([]);
      expect(await overflow(page)).toEqual([]);
      if (axe) expect(await seriousAccessibilityViolations(page)).toEqual([]);
    };
    try {
      expect((await page.goto(payerUrl))!.status()).toBe(200);
      await checked(/Approuver ce paiement.*12,50 ZMW.*Numéro de téléphone.*Approuver laissera ce paiement en attente pour ce numéro\./s);
      expect(await page.getByRole('button', { name: 'Approuver' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Refuser' }).count()).toBe(1);
      expect(plain((await page.locator('body').textContent())!)).not.toMatch(/Approve|Decline|Phone number|Test numbers/);
      // Approve on the pending magic number: still pending, the return page in French refreshes itself.
      await page.getByRole('button', { name: 'Approuver' }).click();
      await page.waitForURL(/\/pay\/return\//);
      // While pending the return page reloads itself every 2 s (a meta refresh, which axe rates critical): its accessibility is checked settled, below.
      await checked(new RegExp(`Facture ${invoice.number}.*En attente de la confirmation du paiement`, 's'), { axe: false });

      // A form from elsewhere: the error page speaks French too.
      const forged = await fetch(payerUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=approve&csrf=forged' });
      expect(forged.status).toBe(403);
      const forgedPage = await forged.text();
      expect(forgedPage).toContain('<html lang="fr">');
      expect(forgedPage).toContain('Ce formulaire a expiré ou ne vient pas de cette page.');
      expect(rawKeysIn(forgedPage)).toEqual([]);

      // Voided while pending: Approve is refused in French, and the return page says why.
      expect((await call('POST', `/v1/invoices/${invoice.id}/void`)).body.status).toBe('void');
      await eventually(async () => (await call('GET', `/v1/payments/${initiated.body.id}`)).body.status === 'canceled' || undefined, 30_000, 'the pending payment canceled');
      expect((await page.goto(payerUrl))!.status()).toBe(200);
      await checked(/Ce paiement a été annulé : la facture n'est plus à payer\./);
      expect((await page.goto(`${mesh.baseUrl}/pay/return/${token}`))!.status()).toBe(200);
      await checked(/Ce paiement a été annulé.*Motif : invoice_void/s);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
    // A token that finds no payment tells no language: English, and still no raw key.
    const unknown = await fetch(`${mesh.baseUrl}/sandbox/pay/${'A'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    const unknownPage = await unknown.text();
    expect(unknownPage).toContain('This payment page does not exist.');
    expect(rawKeysIn(unknownPage)).toEqual([]);
  });
  it("answers the payment page's, the portal's and the checkout's problem pages in the visitor's language; a link that names nobody in English", async () => {
    const page = async (url: string, init?: RequestInit) => {
      const response = await fetch(url, init);
      // The page's text as a reader sees it: its HTML escapes of quotes undone.
      return { status: response.status, text: plain(await response.text()).replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&') };
    };
    const forged = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=forged' };
    const french = (answer: { text: string }, ...expected: string[]) => {
      expect(answer.text).toContain('<html lang="fr">');
      for (const text of expected) expect([text, answer.text.includes(text)]).toEqual([text, true]);
      expect(rawKeysIn(answer.text)).toEqual([]);
    };
    const customer = await call('POST', '/v1/customers', { name: 'Fatou Sarr', email: 'fatou@example.com', preferred_locale: 'fr' });
    const invoice = (await call('POST', '/v1/invoices', { customer: customer.body.id, amount: 5_000, currency: 'zmw', description: 'Location, février', status: 'open' })).body;

    // The payment page: a form from elsewhere.
    const paymentForm = await page(invoice.payment_url, forged);
    expect(paymentForm.status).toBe(403);
    french(paymentForm, 'Ce formulaire a expiré', 'Revenez en arrière, rechargez la page et réessayez.');
    // A payment link that names no invoice names nobody: English.
    const missing = await page(`${mesh.baseUrl}/pay/${'A'.repeat(43)}`);
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('<html lang="en">');
    expect(missing.text).toContain('This payment link does not exist');

    // The portal: an invoice not on the account, a form from elsewhere.
    const session = await call('POST', `/v1/customers/${customer.body.id}/portal-sessions`);
    const notFound = await page(`${session.body.url}/invoices/in_${'0'.repeat(24)}/pdf`);
    expect(notFound.status).toBe(404);
    french(notFound, 'Introuvable', "Cet élément n'existe pas sur votre compte.");
    const portalForm = await page(`${session.body.url}/billing`, forged);
    expect(portalForm.status).toBe(403);
    french(portalForm, 'Ce formulaire a expiré');
    // A link whose signature does not hold names nobody: English.
    const tampered = await page(session.body.url.replace(/(.)(.{5})$/, (_: string, character: string, tail: string) => `${character === 'A' ? 'B' : 'A'}${tail}`));
    expect(tampered.status).toBe(403);
    expect(tampered.text).toContain('This link is not valid');

    // The checkout speaks the account's language: a form from elsewhere, a link taken off sale.
    expect((await call('POST', '/v1/account', { default_locale: 'fr' })).body.default_locale).toBe('fr');
    const plan = await call('POST', '/v1/plans', { name: 'Fibre 20', pricing_model: 'flat_rate', amount_monthly: 15_000, currency: 'xof', billing_intervals: ['monthly'] });
    const link = (await call('POST', '/v1/sales-links', { kind: 'plan', title: 'Fibre 20', plan_id: plan.body.id, billing_interval: 'monthly' })).body;
    const checkoutForm = await page(link.url, forged);
    expect(checkoutForm.status).toBe(403);
    french(checkoutForm, 'Ce formulaire a expiré');
    expect((await call('POST', `/v1/sales-links/${link.id}/deactivate`)).status).toBe(200);
    const offSale = await page(link.url);
    expect(offSale.status).toBe(410);
    french(offSale, "Cette offre n'est plus disponible", 'Le vendeur ne vend plus par ce lien.');
  });
});
