import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogue } from '@recur/i18n';
import type { Browser } from 'playwright-core';
import { collectPageErrors, launchChromium, overflow, screenshot, seriousAccessibilityViolations } from './browser';
import { api, eventually, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * The buyer an invoice names, through /v1 and the customer portal (docs/api/customers.md#tax-ids,
 * docs/api/invoices.md#customer-details): a customer in Senegal reading French, with an address,
 * a phone and tax ids; the finalized invoice records them, its PDF prints them in French, and a
 * later change of the customer leaves the issued invoice as it was. The customer then edits their
 * address and tax id in the portal in Chromium at a phone's width.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;
let browser: Browser;

meshForFile('Teranga', async (started) => {
  ({ mesh, keys, call } = started);
  browser = await launchChromium();
});
afterAll(() => browser?.close());

const ENGLISH_KEYS = Object.keys(catalogue('en')!);
const rawKeysIn = (text: string) => ENGLISH_KEYS.filter((key) => text.includes(key));
/** French spacing (U+00A0, U+202F) as plain spaces. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

/** The PDF's text (pdftotext); with RECUR_SCREENSHOTS=<dir> and a name, its first page as <dir>/<name>.png too. */
async function pdfText(path: string, screenshotName?: string): Promise<string> {
  const response = await fetch(`${mesh.baseUrl}${path}`, { headers: { 'x-api-key': keys.test } });
  expect(response.status).toBe(200);
  const file = join(mkdtempSync(join(tmpdir(), 'recur-buyer-pdf-')), 'document.pdf');
  writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
  const dir = process.env.RECUR_SCREENSHOTS;
  if (dir && screenshotName) {
    mkdirSync(dir, { recursive: true });
    execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', file, join(dir, screenshotName)]);
  }
  return plain(execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }));
}

const DAKAR = { line1: '12 rue Carnot', city: 'Dakar', postal_code: '10200', country: 'SN' };

describe('buyer details', () => {
  it('refuses a malformed tax id naming the entry and its part, and takes Stripe\'s types', async () => {
    const refusals: [unknown, string][] = [
      [[{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'DE12345' }], 'tax_ids[1].value'],
      [[{ type: 'ke_pin', value: 'P05123456X' }], 'tax_ids[0].value'],
      [[{ type: 'vat', value: 'DE123456789' }], 'tax_ids[0].type'],
      [Array.from({ length: 6 }, () => ({ type: 'zm_tin', value: '1001234567' })), 'tax_ids'],
    ];
    for (const [tax_ids, param] of refusals) {
      const refused = await call('POST', '/v1/customers', { name: 'A', email: 'a@example.com', tax_ids });
      expect([param, refused.status, refused.body.error?.param]).toEqual([param, 400, param]);
    }
    const created = await call('POST', '/v1/customers', { name: 'Wanjiku', email: 'w@example.co.ke', tax_ids: [{ type: 'ke_pin', value: 'p051234567x' }] });
    expect([created.status, created.body.tax_ids]).toEqual([201, [{ type: 'ke_pin', value: 'P051234567X' }]]);
    expect((await call('PATCH', `/v1/customers/${created.body.id}`, { tax_ids: null })).body.tax_ids).toEqual([]);
  });

  it('records the Senegalese customer on the invoice at finalization, prints the Bill to block in French, and keeps it when the customer changes', async () => {
    const customer = (await call('POST', '/v1/customers', {
      name: 'Awa Diop', email: 'awa@example.sn', preferred_locale: 'fr', phone: '+221 77 123 45 67', address: DAKAR,
      tax_ids: [{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FR AB 123456789' }],
    })).body;
    expect(customer.tax_ids).toEqual([{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FRAB123456789' }]);
    const draft = (await call('POST', '/v1/invoices', { customer: customer.id, currency: 'xof', amount: 59_000, description: 'Abonnement fibre' })).body;
    expect(draft).toMatchObject({ status: 'draft', customer_address: null, customer_phone: null, customer_tax_ids: null });

    const issued = (await call('POST', `/v1/invoices/${draft.id}/finalize`)).body;
    const recorded = {
      customer_name: 'Awa Diop', customer_email: 'awa@example.sn', customer_phone: '+221771234567', customer_tax_exempt: 'none',
      customer_address: { line1: '12 rue Carnot', line2: null, city: 'Dakar', region: null, postal_code: '10200', country: 'SN' },
      customer_tax_ids: [{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FRAB123456789' }],
    };
    expect(issued).toMatchObject({ status: 'open', ...recorded });

    const text = await pdfText(`/v1/invoices/${draft.id}/pdf`, 'invoice-pdf-bill-to-fr');
    for (const expected of ['Facturé à', 'Awa Diop', '12 rue Carnot', '10200 Dakar', 'Sénégal', 'Tél. : +221771234567', 'awa@example.sn', 'NINEA : 0012345 2G3', 'TVA intracommunautaire', 'FRAB123456789']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    expect(text).not.toMatch(/Bill to|Phone:/);
    expect(rawKeysIn(text)).toEqual([]);

    const changed = await call('PATCH', `/v1/customers/${customer.id}`, { name: 'Awa Diop SARL', address: { city: 'Thiès', country: 'SN' }, phone: null, tax_ids: [{ type: 'sn_ninea', value: '999' }] });
    expect(changed.status).toBe(200);
    expect((await call('GET', `/v1/invoices/${draft.id}`)).body).toMatchObject(recorded);
    const after = await pdfText(`/v1/invoices/${draft.id}/pdf`);
    expect([after.includes('12 rue Carnot'), after.includes('NINEA : 0012345 2G3'), after.includes('Thiès')]).toEqual([true, true, false]);
    const updated = await eventually(async () => {
      const events = (await call('GET', `/v1/events?type=customer.updated&limit=10`)).body.data as { data: { object: { id: string }; previous_attributes: Record<string, unknown> } }[];
      return events.find((event) => event.data.object.id === customer.id);
    }, 30_000, 'customer.updated');
    expect(updated.data.previous_attributes).toMatchObject({ tax_ids: recorded.customer_tax_ids, phone: '+221771234567' });
  });

  it('lets the customer edit their address and tax id in the portal, in French at 375 px: refused in their words, saved through customer.updated', async () => {
    const customer = (await call('POST', '/v1/customers', { name: 'Moussa Fall', email: 'moussa@example.sn', preferred_locale: 'fr' })).body;
    const context = await browser.newContext({ bypassCSP: true, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    try {
      const session = await call('POST', `/v1/customers/${customer.id}/portal-sessions`);
      expect((await page.goto(session.body.url))!.status()).toBe(200);
      expect(await page.getByRole('heading', { name: 'Adresse de facturation et identifiant fiscal' }).count()).toBe(1);
      await page.getByLabel('Adresse', { exact: true }).fill('Villa 42, Sacré-Cœur 3');
      await page.getByLabel('Code postal').fill('10200');
      await page.getByLabel('Ville').fill('Dakar');
      await page.getByLabel(/^Pays/).fill('sn');
      await page.getByLabel("Type d'identifiant fiscal").selectOption('ke_pin');
      await page.getByLabel('Identifiant fiscal', { exact: true }).fill('P0512X');
      const [refused] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Enregistrer la facturation' }).click()]);
      expect(refused!.status()).toBe(400);
      expect(await page.getByRole('alert').textContent()).toBe("Un PIN KRA se compose d'une lettre, de neuf chiffres et d'une lettre, par exemple P051234567X.");
      // What the customer typed is still there.
      expect(await page.getByLabel('Ville').inputValue()).toBe('Dakar');
      expect(await overflow(page)).toEqual([]);

      await page.getByLabel("Type d'identifiant fiscal").selectOption('sn_ninea');
      await page.getByLabel('Identifiant fiscal', { exact: true }).fill('0012345 2G3');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Enregistrer la facturation' }).click()]);
      expect(await page.getByRole('status').textContent()).toContain('ont été enregistrés');
      expect(await page.getByLabel('Identifiant fiscal', { exact: true }).inputValue()).toBe('0012345 2G3');
      const body = (await page.locator('body').textContent())!;
      expect(rawKeysIn(body)).toEqual([]);
      expect(await overflow(page)).toEqual([]);
      expect(await seriousAccessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'customer-portal-billing-fr-phone');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({
      address: { line1: 'Villa 42, Sacré-Cœur 3', line2: null, city: 'Dakar', region: null, postal_code: '10200', country: 'SN' },
      tax_ids: [{ type: 'sn_ninea', value: '0012345 2G3' }],
    });
    const updated = await eventually(async () => {
      const events = (await call('GET', `/v1/events?type=customer.updated&limit=10`)).body.data as { data: { object: { id: string }; source?: string; previous_attributes: Record<string, unknown> } }[];
      return events.find((event) => event.data.object.id === customer.id);
    }, 30_000, 'customer.updated from the portal');
    expect(updated.data).toMatchObject({ source: 'portal', previous_attributes: { address: null, tax_ids: [] } });
  });
});
