import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, eventually, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * Tax through /v1 as docs/api/tax-rates.md tells it: a 16 % exclusive rate for Zambia and an
 * 18 % inclusive one for Senegal, a customer in each country with a plan subscription and a
 * one-off invoice, the totals to the minor unit, and the PDFs' tax lines read back as text.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;

meshForFile('Lusaka Dakar Trading', (started) => ({ mesh, keys, call } = started));

async function created(path: string, body: Record<string, unknown>) {
  const response = await call('POST', path, body);
  expect([path, response.status]).toEqual([path, 201]);
  return response.body;
}

async function pdfText(invoiceId: string): Promise<string> {
  const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoiceId}/pdf`, { headers: { 'x-api-key': keys.test } });
  expect(response.status).toBe(200);
  const file = join(mkdtempSync(join(tmpdir(), 'recur-tax-pdf-')), 'invoice.pdf');
  writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
  // Intl puts a no-break space between a currency code and its amount.
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).replace(/\u00a0/g, ' ');
}

/** The subscription's first invoice, once the billing clock has raised it. */
async function firstInvoiceOf(subscription: string) {
  let invoice: Record<string, any> | undefined;
  await eventually(async () => {
    invoice = (await call('GET', `/v1/invoices?subscription=${subscription}`)).body.data[0];
    return invoice !== undefined;
  }, 60_000, 'the subscription invoice');
  return invoice!;
}

const taxOf = (invoice: Record<string, any>) => ({
  subtotal: invoice.subtotal, tax: invoice.tax, total: invoice.total, total_excluding_tax: invoice.total_excluding_tax, amount_due: invoice.amount_due,
  total_tax_amounts: invoice.total_tax_amounts.map((rate: Record<string, unknown>) => [rate.tax_rate, rate.percentage, rate.inclusive, rate.taxable_amount, rate.amount]),
});

describe('tax rates and taxed invoices', () => {
  it('creates, lists, retrieves, updates and archives rates, percentages kept exactly', async () => {
    const rate = await created('/v1/tax-rates', { display_name: 'Levy', percentage: 7.5, inclusive: false, country: 'NG', metadata: { ref: 'a' } });
    expect(rate).toMatchObject({ object: 'tax_rate', display_name: 'Levy', percentage: 7.5, inclusive: false, country: 'NG', region: null, active: true, account_default: false });
    expect((await created('/v1/tax-rates', { display_name: 'Fine', percentage: '18.0001', inclusive: true })).percentage).toBe(18.0001);
    expect((await call('GET', `/v1/tax-rates/${rate.id}`)).body).toEqual(rate);
    const archived = await call('PATCH', `/v1/tax-rates/${rate.id}`, { active: false, display_name: 'Old levy' });
    expect([archived.status, archived.body.active, archived.body.display_name, archived.body.percentage]).toEqual([200, false, 'Old levy', 7.5]);
    const listed = (await call('GET', '/v1/tax-rates?active=false')).body;
    expect(listed.data.map((item: { id: string }) => item.id)).toContain(rate.id);
    for (const [body, param] of [[{ percentage: 7.12345 }, 'percentage'], [{ percentage: 101 }, 'percentage'], [{ country: 'XX' }, 'country'], [{ country: 'zm' }, 'country']] as const) {
      const refused = await call('POST', '/v1/tax-rates', { display_name: 'VAT', percentage: 16, inclusive: false, ...body });
      expect([refused.status, refused.body.error?.param]).toEqual([400, param]);
    }
    expect((await call('GET', '/v1/tax-rates/txr_nothing')).status).toBe(404);
  });

  it('taxes plan and one-off invoices by the customer country: 16 % exclusive in Zambia, 18 % inclusive in Senegal', async () => {
    const vatZm = await created('/v1/tax-rates', { display_name: 'VAT', percentage: 16, inclusive: false, country: 'ZM' });
    const tvaSn = await created('/v1/tax-rates', { display_name: 'TVA', percentage: 18, inclusive: true, country: 'SN' });
    const zambian = await created('/v1/customers', { name: 'Mwila Banda', email: 'mwila@example.com', address: { line1: 'Cairo Road 1', city: 'Lusaka', country: 'ZM' } });
    const senegalese = await created('/v1/customers', { name: 'Awa Diop', email: 'awa@example.com', address: { city: 'Dakar', postal_code: '10200', country: 'SN' } });
    expect([zambian.address.country, zambian.tax_exempt, senegalese.address.postal_code]).toEqual(['ZM', 'none', '10200']);
    const planZmw = await created('/v1/plans', { name: 'Pro ZMW', pricing_model: 'flat_rate', amount_monthly: 10_000, currency: 'zmw' });
    const planXof = await created('/v1/plans', { name: 'Pro XOF', pricing_model: 'flat_rate', amount_monthly: 10_000, currency: 'xof' });

    const subZm = await created('/v1/subscriptions', { customer: zambian.id, plan: planZmw.id, billing_interval: 'monthly' });
    const subSn = await created('/v1/subscriptions', { customer: senegalese.id, plan: planXof.id, billing_interval: 'monthly' });
    // The preview of the next period shows the figures its invoice will have.
    const upcomingZm = (await call('GET', `/v1/subscriptions/${subZm.id}/upcoming-invoice`)).body;
    expect(taxOf({ ...upcomingZm, amount_due: upcomingZm.total })).toEqual({ subtotal: 10_000, tax: 1_600, total: 11_600, total_excluding_tax: 10_000, amount_due: 11_600, total_tax_amounts: [[vatZm.id, 16, false, 10_000, 1_600]] });
    expect(upcomingZm.lines[0].tax_amounts).toEqual([{ tax_rate: vatZm.id, display_name: 'VAT', percentage: 16, inclusive: false, taxable_amount: 10_000, amount: 1_600 }]);
    const upcomingSn = (await call('GET', `/v1/subscriptions/${subSn.id}/upcoming-invoice`)).body;
    expect([upcomingSn.tax, upcomingSn.total, upcomingSn.total_excluding_tax]).toEqual([1_525, 10_000, 8_475]);
    const planInvoiceZm = await firstInvoiceOf(subZm.id);
    const planInvoiceSn = await firstInvoiceOf(subSn.id);
    expect(planInvoiceZm.lines[0].tax_amounts).toEqual(upcomingZm.lines[0].tax_amounts);
    expect(taxOf(planInvoiceZm)).toEqual({ subtotal: 10_000, tax: 1_600, total: 11_600, total_excluding_tax: 10_000, amount_due: 11_600, total_tax_amounts: [[vatZm.id, 16, false, 10_000, 1_600]] });
    // Inclusive: the price stays the total; 10 000 × 18/118 = 1 525.42 → 1 525.
    expect(taxOf(planInvoiceSn)).toEqual({ subtotal: 10_000, tax: 1_525, total: 10_000, total_excluding_tax: 8_475, amount_due: 10_000, total_tax_amounts: [[tvaSn.id, 18, true, 8_475, 1_525]] });

    const oneOffZm = await created('/v1/invoices', { customer: zambian.id, currency: 'zmw', status: 'open', lines: [{ description: 'Installation', amount: 12_347 }, { description: 'Cable', amount: 2_500, quantity: 5 }] });
    const oneOffSn = await created('/v1/invoices', { customer: senegalese.id, currency: 'xof', status: 'open', lines: [{ description: 'Formation', amount: 5_900 }] });
    // Per line, half up: 12 347 × 16 % = 1 975.52 → 1 976; 2 500 × 16 % = 400.
    expect(oneOffZm.lines.map((line: { tax_amounts: { amount: number }[] }) => line.tax_amounts[0].amount)).toEqual([1_976, 400]);
    expect(taxOf(oneOffZm)).toEqual({ subtotal: 14_847, tax: 2_376, total: 17_223, total_excluding_tax: 14_847, amount_due: 17_223, total_tax_amounts: [[vatZm.id, 16, false, 14_847, 2_376]] });
    expect(taxOf(oneOffSn)).toEqual({ subtotal: 5_900, tax: 900, total: 5_900, total_excluding_tax: 5_000, amount_due: 5_900, total_tax_amounts: [[tvaSn.id, 18, true, 5_000, 900]] });

    const zmText = await pdfText(oneOffZm.id);
    for (const expected of ['VAT 16%: ZMW 19.76', 'VAT 16%: ZMW 4.00', 'Total excluding tax', 'VAT 16% on ZMW 148.47', 'ZMW 23.76', 'ZMW 172.23']) expect([expected, zmText.includes(expected)]).toEqual([expected, true]);
    const snText = await pdfText(planInvoiceSn.id);
    for (const expected of ['TVA 18% included on', '8,475', '1,525', '10,000']) expect([expected, snText.includes(expected)]).toEqual([expected, true]);
  });

  it("a plan's and an add-on's own rates come before the customer's country rate, on the preview and the invoice; a subscription keeps the rates it was sold with", async () => {
    const countryRate = await created('/v1/tax-rates', { display_name: 'VAT', percentage: 15, inclusive: false, country: 'GH' });
    const planRate = await created('/v1/tax-rates', { display_name: 'Digital services', percentage: 7.5, inclusive: false });
    const addonRate = await created('/v1/tax-rates', { display_name: 'Levy', percentage: 3, inclusive: false });
    const archivedRate = await created('/v1/tax-rates', { display_name: 'Old', percentage: 1, inclusive: false });
    await call('PATCH', `/v1/tax-rates/${archivedRate.id}`, { active: false });
    // A rate that names nothing, an archived one, or two are refused before anything is stored.
    for (const [tax_rates, code] of [[['txr_nothing'], 'resource_missing'], [[archivedRate.id], 'parameter_invalid'], [[planRate.id, addonRate.id], 'parameter_invalid']] as const) {
      const refused = await call('POST', '/v1/plans', { name: `Refused ${code}`, pricing_model: 'flat_rate', amount_monthly: 1_000, currency: 'ghs', tax_rates });
      expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([400, code, 'tax_rates']);
    }
    expect((await call('GET', '/v1/plans?limit=100')).body.data.filter((plan: { name: string }) => plan.name.startsWith('Refused'))).toEqual([]);

    const plan = await created('/v1/plans', { name: 'Streaming GHS', pricing_model: 'flat_rate', amount_monthly: 10_000, currency: 'ghs', tax_rates: [planRate.id] });
    const addon = await created('/v1/addons', { name: 'HD', price_monthly: 2_000, currency: 'ghs', tax_rates: [addonRate.id] });
    expect([plan.tax_rates, addon.tax_rates]).toEqual([[planRate.id], [addonRate.id]]);
    const ghanaian = await created('/v1/customers', { name: 'Kofi Mensah', email: 'kofi@example.com', address: { city: 'Accra', country: 'GH' } });
    const subscription = await created('/v1/subscriptions', { customer: ghanaian.id, plan: plan.id, billing_interval: 'monthly', add_ons: [{ addon: addon.id, quantity: 1 }] });

    const ratesOf = (invoice: Record<string, any>) => invoice.lines.map((line: { description: string; tax_amounts: { tax_rate: string; amount: number }[] }) => [line.description, line.tax_amounts.map((tax) => [tax.tax_rate, tax.amount])]);
    const invoice = await firstInvoiceOf(subscription.id);
    // 10 000 × 7.5 % = 750 by the plan's rate, 2 000 × 3 % = 60 by the add-on's; the country's 15 % is not used.
    expect(ratesOf(invoice)).toEqual([['Streaming GHS', [[planRate.id, 750]]], ['HD', [[addonRate.id, 60]]]]);
    expect([invoice.subtotal, invoice.tax, invoice.total]).toEqual([12_000, 810, 12_810]);
    const upcoming = (await call('GET', `/v1/subscriptions/${subscription.id}/upcoming-invoice`)).body;
    expect([ratesOf(upcoming), upcoming.tax, upcoming.total]).toEqual([ratesOf(invoice), 810, 12_810]);

    // The plan stops naming a rate: new subscriptions get the country's; the running one keeps the rate it was sold with.
    const cleared = await call('PATCH', `/v1/plans/${plan.id}`, { tax_rates: [] });
    expect([cleared.status, cleared.body.tax_rates]).toEqual([200, []]);
    expect(ratesOf((await call('GET', `/v1/subscriptions/${subscription.id}/upcoming-invoice`)).body)[0]).toEqual(['Streaming GHS', [[planRate.id, 750]]]);
    const later = await created('/v1/subscriptions', { customer: ghanaian.id, plan: plan.id, billing_interval: 'monthly' });
    expect(ratesOf(await firstInvoiceOf(later.id))).toEqual([['Streaming GHS', [[countryRate.id, 1_500]]]]);
  });

  it('a line names its own rate first; an exempt customer pays none; a reverse-charge invoice says so and carries no tax', async () => {
    const reduced = await created('/v1/tax-rates', { display_name: 'VAT reduced', percentage: 5, inclusive: false, country: 'KE' });
    await created('/v1/tax-rates', { display_name: 'VAT', percentage: 16, inclusive: false, country: 'KE' });
    const kenyan = await created('/v1/customers', { name: 'Wanjiru Kamau', email: 'wanjiru@example.com', address: { country: 'KE' } });
    const invoice = await created('/v1/invoices', { customer: kenyan.id, currency: 'kes', lines: [{ description: 'Books', amount: 10_000, tax_rates: [reduced.id] }] });
    expect(taxOf(invoice).total_tax_amounts).toEqual([[reduced.id, 5, false, 10_000, 500]]);

    const exempt = await created('/v1/customers', { name: 'NGO', email: 'ngo@example.com', address: { country: 'KE' }, tax_exempt: 'exempt' });
    expect(taxOf(await created('/v1/invoices', { customer: exempt.id, currency: 'kes', amount: 10_000, description: 'Books' }))).toMatchObject({ tax: 0, total: 10_000, total_tax_amounts: [] });

    // No country rate fits a customer without an address: the account default does; a new default replaces it.
    const firstDefault = await created('/v1/tax-rates', { display_name: 'GST', percentage: 10, inclusive: false, account_default: true });
    const secondDefault = await created('/v1/tax-rates', { display_name: 'GST', percentage: 12.5, inclusive: false, account_default: true });
    expect((await call('GET', `/v1/tax-rates/${firstDefault.id}`)).body.account_default).toBe(false);
    const nowhere = await created('/v1/customers', { name: 'Nomad', email: 'nomad@example.com' });
    expect(taxOf(await created('/v1/invoices', { customer: nowhere.id, currency: 'usd', amount: 1_004, description: 'Guide' })).total_tax_amounts).toEqual([[secondDefault.id, 12.5, false, 1_004, 126]]);

    const business = await created('/v1/customers', { name: 'Acme GmbH', email: 'ap@acme.example', address: { country: 'KE' } });
    const reversed = await call('PATCH', `/v1/customers/${business.id}`, { tax_exempt: 'reverse' });
    expect(reversed.body.tax_exempt).toBe('reverse');
    const reverse = await created('/v1/invoices', { customer: business.id, currency: 'kes', amount: 10_000, description: 'Consulting', status: 'open' });
    expect([reverse.customer_tax_exempt, reverse.tax, reverse.total]).toEqual(['reverse', 0, 10_000]);
    expect(await pdfText(reverse.id)).toContain('Reverse charge: the customer accounts for VAT');
  });
});
