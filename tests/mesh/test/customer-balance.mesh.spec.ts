import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * The customer balance through /v1 as docs/api/customer-balance.md tells it: a manual credit,
 * invoices consuming it at finalization (on the invoice, its PDF and the customer), and the ledger.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;

meshForFile('Kafue Credit Traders', (started) => ({ mesh, keys, call } = started));

async function created(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await call('POST', path, body, headers);
  expect([path, response.status, response.body?.error]).toEqual([path, 201, undefined]);
  return response.body;
}

async function pdfText(invoiceId: string): Promise<string> {
  const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoiceId}/pdf`, { headers: { 'x-api-key': keys.test } });
  expect(response.status).toBe(200);
  const file = join(mkdtempSync(join(tmpdir(), 'recur-balance-pdf-')), 'invoice.pdf');
  writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).replace(/\u00a0/g, ' ');
}

describe('customer balance', () => {
  it('credits a customer by hand, shows the balance on the customer, and lets the next invoices consume it', async () => {
    const customer = await created('/v1/customers', { name: 'Mwila Banda', email: 'mwila@example.com' });
    expect(customer).toMatchObject({ balance: 0, currency: null });
    const adjustment = await created(`/v1/customers/${customer.id}/balance-transactions`, { amount: -5_000, currency: 'zmw', description: 'Goodwill for the outage' }, { 'idempotency-key': 'credit-mwila-1' });
    expect(adjustment).toMatchObject({ object: 'customer_balance_transaction', customer: customer.id, type: 'adjustment', amount: -5_000, currency: 'zmw', ending_balance: -5_000, description: 'Goodwill for the outage', invoice: null });
    // The same Idempotency-Key answers the same transaction: credited once.
    expect((await created(`/v1/customers/${customer.id}/balance-transactions`, { amount: -5_000, currency: 'zmw', description: 'Goodwill for the outage' }, { 'idempotency-key': 'credit-mwila-1' })).id).toBe(adjustment.id);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({ balance: -5_000, currency: 'zmw' });

    // Right after the POST the list of customers shows it too.
    const listed = (await call('GET', '/v1/customers?limit=100')).body.data.find((entry: { id: string }) => entry.id === customer.id);
    expect(listed).toMatchObject({ balance: -5_000, currency: 'zmw' });

    const covered = await created('/v1/invoices', { customer: customer.id, amount: 1_200, currency: 'zmw', description: 'Support hours', status: 'open' });
    expect(covered).toMatchObject({ status: 'paid', total: 1_200, amount_due: 0, amount_paid: 0, starting_balance: -5_000, ending_balance: -3_800 });
    const partly = await created('/v1/invoices', { customer: customer.id, amount: 10_000, currency: 'zmw', description: 'Installation', status: 'open' });
    expect(partly).toMatchObject({ status: 'open', total: 10_000, amount_due: 6_200, starting_balance: -3_800, ending_balance: 0 });
    const text = await pdfText(partly.id);
    expect(text).toMatch(/Applied balance\s+−ZMW 38\.00/);
    expect(text).toMatch(/Amount due\s+ZMW 62\.00/);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({ balance: 0, currency: 'zmw' });

    const ledger = (await call('GET', `/v1/customers/${customer.id}/balance-transactions`)).body;
    expect(ledger).toMatchObject({ object: 'list', url: `/v1/customers/${customer.id}/balance-transactions` });
    expect(ledger.data.map((entry: Record<string, unknown>) => [entry.type, entry.amount, entry.ending_balance, entry.invoice])).toEqual([
      ['applied_to_invoice', 3_800, 0, partly.id],
      ['applied_to_invoice', 1_200, -3_800, covered.id],
      ['adjustment', -5_000, -5_000, null],
    ]);
  });

  it('refuses what a balance cannot hold, and an unknown customer', async () => {
    const customer = await created('/v1/customers', { name: 'Chanda Phiri', email: 'chanda@example.com' });
    const owing = await call('POST', `/v1/customers/${customer.id}/balance-transactions`, { amount: 100, currency: 'zmw' });
    expect([owing.status, owing.body.error.code, owing.body.error.param]).toEqual([400, 'amount_too_large', 'amount']);
    await created(`/v1/customers/${customer.id}/balance-transactions`, { amount: -100, currency: 'zmw' });
    const other = await call('POST', `/v1/customers/${customer.id}/balance-transactions`, { amount: -100, currency: 'usd' });
    expect([other.status, other.body.error.code, other.body.error.param]).toEqual([400, 'currency_mismatch', 'currency']);
    const missing = await call('GET', '/v1/customers/cus_missing/balance-transactions');
    expect(missing.status).toBe(404);
    const noCustomer = await call('POST', '/v1/customers/cus_missing/balance-transactions', { amount: -100, currency: 'zmw' });
    expect(noCustomer.status).toBe(400);
  });
});
