import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryDatabase } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { api, approveSandboxPayment, eventually, type Keys, type Mesh, meshForFile, sleep } from './mesh';

/**
 * Proration that gives money back, through /v1 and a test clock, as docs/api/subscriptions.md#final-invoice
 * tells it: a cancellation now with `prorate: true` credits the unused time (taxed as it was charged)
 * on a final invoice whose negative total becomes customer balance, which the next one-off invoice
 * consumes; a downgrade's credit survives the end of the subscription as balance; and the
 * upcoming-invoice preview shows the balance the renewal will consume, as the renewal then does.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;

meshForFile('Luangwa Proration Ltd', (started) => ({ mesh, keys, call } = started));

const DAY = 86_400;
// January 2030 has 31 days: 31 000 a month is 1 000 a day.
const START = Date.UTC(2030, 0, 1, 12) / 1000;
const FEB = Date.UTC(2030, 1, 1, 12) / 1000;

type Invoice = Record<string, any>;

async function created(path: string, body: Record<string, unknown>) {
  const response = await call('POST', path, body);
  expect([path, response.status, response.body?.error]).toEqual([path, 201, undefined]);
  return response.body;
}

async function advanceTo(clock: string, frozenTime: number): Promise<void> {
  expect((await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: frozenTime })).status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clock}`)).body.status === 'ready' || undefined, 90_000, 'the test clock to be ready');
}

async function invoiceOf(subscription: string, billingReason: string, periodStart?: number): Promise<Invoice> {
  return eventually(async () => {
    const listed = await call('GET', `/v1/invoices?subscription=${subscription}&limit=100`);
    return listed.body.data.find((invoice: Invoice) => invoice.billing_reason === billingReason && (periodStart === undefined || invoice.period?.start === periodStart));
  }, 60_000, `the ${billingReason} invoice of ${subscription}`);
}

async function pdfText(invoiceId: string): Promise<string> {
  const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoiceId}/pdf`, { headers: { 'x-api-key': keys.test } });
  expect(response.status).toBe(200);
  const file = join(mkdtempSync(join(tmpdir(), 'recur-proration-pdf-')), 'invoice.pdf');
  writeFileSync(file, new Uint8Array(await response.arrayBuffer()));
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).replace(/\u00a0/g, ' ');
}

const linesOf = (invoice: Invoice) => invoice.lines.map((line: any) => [line.kind, line.description, line.amount, line.tax_amounts.map((tax: any) => tax.amount)]);
const ledgerOf = async (customer: string) =>
  (await call('GET', `/v1/customers/${customer}/balance-transactions`)).body.data.map((entry: any) => [entry.type, entry.amount, entry.ending_balance, entry.invoice]);

describe('proration that gives money back', () => {
  let vat: { id: string };
  beforeAll(async () => {
    vat = await created('/v1/tax-rates', { display_name: 'VAT', percentage: 16, inclusive: false, country: 'ZM' });
    expect(mesh.baseUrl).toBeTruthy();
    expect(keys.test).toBeTruthy();
  });

  it('cancelling ten days in with prorate credits 21 days with their tax, the negative total becomes balance, and the next one-off invoice consumes it', async () => {
    const clock = (await created('/v1/test-clocks', { name: 'prorate on cancel', frozen_time: START })).id;
    const customer = await created('/v1/customers', { name: 'Mutale Zulu', email: 'mutale@example.com', address: { city: 'Lusaka', country: 'ZM' }, test_clock: clock });
    const plan = await created('/v1/plans', { name: 'Clinic ZMW', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' });
    const subscription = await created('/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' });
    const first = await invoiceOf(subscription.id, 'subscription_create');
    expect(first).toMatchObject({ status: 'open', total: 35_960, amount_due: 35_960 });

    await advanceTo(clock, START + 10 * DAY);
    const refused = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true, prorate: true });
    expect([refused.status, refused.body.error?.param]).toEqual([400, 'prorate']);
    const cancelled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { prorate: true });
    expect(cancelled.body).toMatchObject({ status: 'cancelled', ended_at: START + 10 * DAY });

    // 31 000 × 21/31 = 21 000 credited, with its 16 % (−3 360): the invoice's total is −24 360, nothing is due.
    const final = await invoiceOf(subscription.id, 'subscription_final');
    expect(linesOf(final)).toEqual([['proration', 'Unused time on Clinic ZMW after 2030-01-11', -21_000, [-3_360]]]);
    expect(final).toMatchObject({ status: 'paid', subtotal: -21_000, tax: -3_360, total: -24_360, amount_due: 0, amount_paid: 0, starting_balance: 0, ending_balance: -24_360 });
    expect(final.total_tax_amounts.map((tax: any) => [tax.tax_rate, tax.taxable_amount, tax.amount])).toEqual([[vat.id, -21_000, -3_360]]);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({ balance: -24_360, currency: 'zmw' });
    expect(await ledgerOf(customer.id)).toEqual([['applied_to_invoice', -24_360, -24_360, final.id]]);
    const text = await pdfText(final.id);
    expect(text).toMatch(/Total\s+-ZMW 243\.60/);
    expect(text).toMatch(/Credited to balance\s+ZMW 243\.60/);
    expect(text).not.toMatch(/Applied balance/);
    // The period's invoice was never paid: it still owes its whole amount (docs/decisions.md#customer-balance).
    expect((await call('GET', `/v1/invoices/${first.id}`)).body).toMatchObject({ status: 'open', amount_due: 35_960 });

    // The customer's next invoice takes the credit before asking for money: 10 000 + 16 % covered in full.
    const oneOff = await created('/v1/invoices', { customer: customer.id, amount: 10_000, currency: 'zmw', description: 'Site visit', status: 'open' });
    expect(oneOff).toMatchObject({ status: 'paid', total: 11_600, amount_due: 0, starting_balance: -24_360, ending_balance: -12_760 });
    expect(await ledgerOf(customer.id)).toEqual([['applied_to_invoice', 11_600, -12_760, oneOff.id], ['applied_to_invoice', -24_360, -24_360, final.id]]);
  });

  it('with refund: true the credit of a paid period goes back to its payer, once: the balance takes it and gives it up in one step, and a later refund of that invoice gives back only the rest', async () => {
    const clock = (await created('/v1/test-clocks', { name: 'refund on cancel', frozen_time: START })).id;
    const customer = await created('/v1/customers', { name: 'Chanda Phiri', email: 'chanda@example.com', address: { city: 'Kabwe', country: 'ZM' }, test_clock: clock });
    const plan = await created('/v1/plans', { name: 'Pharmacy ZMW', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' });
    const subscription = await created('/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' });
    const first = await invoiceOf(subscription.id, 'subscription_create');
    const payment = await created('/v1/payments/initiate', { invoice_id: first.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
    await approveSandboxPayment(mesh, payment.redirectUrl);
    await eventually(async () => (await call('GET', `/v1/invoices/${first.id}`)).body.status === 'paid' || undefined, 30_000, 'the period invoice paid');

    await advanceTo(clock, START + 10 * DAY);
    const refused = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { refund: true });
    expect([refused.status, refused.body.error?.param]).toEqual([400, 'refund']);
    const notBoolean = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { prorate: true, refund: 'yes' });
    expect([notBoolean.status, notBoolean.body.error?.param]).toEqual([400, 'refund']);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status).toBe('active');
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { prorate: true, refund: true })).body).toMatchObject({ status: 'cancelled' });

    // The final invoice credits 21 days with their tax (−24 360) to the balance, as with prorate
    // alone; the refund then takes all of it back out (its `refund` entry), and the payer gets it.
    const final = await invoiceOf(subscription.id, 'subscription_final');
    expect(final).toMatchObject({ status: 'paid', total: -24_360, ending_balance: -24_360 });
    const ledger = await eventually(async () => {
      const entries = await ledgerOf(customer.id);
      return entries.length === 2 ? entries : undefined;
    }, 30_000, 'the credit reserved for the refund');
    expect(ledger).toEqual([['refund', 24_360, 0, final.id], ['applied_to_invoice', -24_360, -24_360, final.id]]);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body.balance).toBe(0);
    // Nothing more moves: the one reservation stands (no second refund, no credit back).
    await sleep(2_000);
    expect(await ledgerOf(customer.id)).toEqual(ledger);

    // The period's invoice keeps no credit note for it (the final invoice is the credit's record),
    // but the money refunded counts: a full refund of it now gives back only the rest, 35 960 − 24 360.
    expect((await call('GET', `/v1/refunds?invoice=${first.id}`)).body.total).toBe(0);
    const rest = await created('/v1/refunds', { invoice_id: first.id, reason: 'requested_by_customer' });
    expect(rest).toMatchObject({ invoice: first.id, amount: 11_600 });
    const more = await call('POST', '/v1/refunds', { invoice_id: first.id, reason: 'requested_by_customer' });
    expect([more.status, more.body.error?.code]).toEqual([409, 'invoice_refunded']);
  });

  it('with refund: true and the period unpaid, the credit stays in the balance', async () => {
    const clock = (await created('/v1/test-clocks', { name: 'refund unpaid', frozen_time: START })).id;
    const customer = await created('/v1/customers', { name: 'Mwape Tembo', email: 'mwape@example.com', address: { city: 'Kitwe', country: 'ZM' }, test_clock: clock });
    const plan = await created('/v1/plans', { name: 'Depot ZMW', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' });
    const subscription = await created('/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' });
    await invoiceOf(subscription.id, 'subscription_create');
    await advanceTo(clock, START + 10 * DAY);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { prorate: true, refund: true })).status).toBe(200);
    const final = await invoiceOf(subscription.id, 'subscription_final');
    // Payments' collection consumer has read the final invoice (its inbox holds the event) and refunded nothing.
    await eventually(async () => {
      const events = await queryDatabase<{ id: string }>(mesh.databaseUrls.invoicing, 'SELECT id FROM outbox_events WHERE payload::text LIKE $1', [`%${final.id}%`]);
      const read = await queryDatabase(mesh.databaseUrls.payments, "SELECT 1 FROM inbox_events WHERE consumer = 'payments.collection' AND event_id = ANY($1)", [events.map((event) => event.id)]);
      return read.length > 0 || undefined;
    }, 30_000, "payments' collection consumer to read the final invoice");
    expect(await ledgerOf(customer.id)).toEqual([['applied_to_invoice', -24_360, -24_360, final.id]]);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body.balance).toBe(-24_360);
  });

  it("a downgrade's credit survives the end of the subscription as balance", async () => {
    const clock = (await created('/v1/test-clocks', { name: 'downgrade then end', frozen_time: START })).id;
    const customer = await created('/v1/customers', { name: 'Bwalya Mumba', email: 'bwalya@example.com', address: { city: 'Ndola', country: 'ZM' }, test_clock: clock });
    const large = await created('/v1/plans', { name: 'Large ZMW', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' });
    const small = await created('/v1/plans', { name: 'Small ZMW', pricing_model: 'flat_rate', amount_monthly: 15_500, currency: 'zmw' });
    const subscription = await created('/v1/subscriptions', { customer: customer.id, plan: large.id, billing_interval: 'monthly' });
    await advanceTo(clock, START + 10 * DAY);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan: small.id, effective: 'immediately' })).status).toBe(200);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true })).body).toMatchObject({ cancel_at_period_end: true });

    await advanceTo(clock, FEB + DAY);
    // −21 000 for Large and +10 500 for Small over the 21 days left, each taxed: −12 180 goes to the balance.
    const final = await invoiceOf(subscription.id, 'subscription_final');
    expect(linesOf(final).map(([kind, , amount, tax]: [string, string, number, number[]]) => [kind, amount, tax])).toEqual([['proration', -21_000, [-3_360]], ['proration', 10_500, [1_680]]]);
    expect(final).toMatchObject({ status: 'paid', total: -12_180, amount_due: 0, ending_balance: -12_180 });
    expect(final.lines.some((line: any) => /not refunded/.test(line.description))).toBe(false);
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({ balance: -12_180, currency: 'zmw' });
  });

  it('the upcoming invoice shows every credit the renewal will apply — pending proration credits and the balance — and the renewal applies exactly those', async () => {
    const clock = (await created('/v1/test-clocks', { name: 'preview with credits', frozen_time: START })).id;
    const customer = await created('/v1/customers', { name: 'Chileshe Tembo', email: 'chileshe@example.com', address: { city: 'Kitwe', country: 'ZM' }, test_clock: clock });
    const large = await created('/v1/plans', { name: 'Studio Large ZMW', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' });
    const small = await created('/v1/plans', { name: 'Studio Small ZMW', pricing_model: 'flat_rate', amount_monthly: 15_500, currency: 'zmw' });
    const subscription = await created('/v1/subscriptions', { customer: customer.id, plan: large.id, billing_interval: 'monthly' });
    await invoiceOf(subscription.id, 'subscription_create');
    await created(`/v1/customers/${customer.id}/balance-transactions`, { amount: -5_000, currency: 'zmw', description: 'Goodwill' });
    await advanceTo(clock, START + 10 * DAY);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan: small.id, effective: 'immediately' })).status).toBe(200);

    // February at 15 500, the downgrade's −21 000 + 10 500, each taxed 16 %: 5 000 + 800 = 5 800, of which the balance pays 5 000.
    const preview = (await call('GET', `/v1/subscriptions/${subscription.id}/upcoming-invoice`)).body;
    expect(preview.lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 15_500], ['proration', -21_000], ['proration', 10_500]]);
    expect(preview).toMatchObject({ period_start: FEB, subtotal: 5_000, tax: 800, total: 5_800, starting_balance: -5_000, ending_balance: 0, amount_due: 800 });

    await advanceTo(clock, FEB + DAY);
    const renewal = await invoiceOf(subscription.id, 'subscription_cycle', FEB);
    const figures = (invoice: Invoice) => ({ subtotal: invoice.subtotal, discount: invoice.discount, tax: invoice.tax, total: invoice.total, starting_balance: invoice.starting_balance, ending_balance: invoice.ending_balance, amount_due: invoice.amount_due });
    expect(figures(renewal)).toEqual(figures(preview));
    expect(renewal.lines.map((line: any) => [line.kind, line.description, line.amount])).toEqual(preview.lines.map((line: any) => [line.kind, line.description, line.amount]));
    expect((await call('GET', `/v1/customers/${customer.id}`)).body).toMatchObject({ balance: 0 });
  });
});
