import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { api, eventually, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * Credit notes that move no money, through /v1 as docs/api/credit-notes.md tells them: an open
 * invoice credited in part and paid for the rest, a paid invoice credited to the customer
 * balance that the next invoice consumes, a partial refund and a credit note adding up to the
 * cent, credit notes racing refunds never exceeding the total, and bad input changing nothing.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;

meshForFile('Chipata Credit Works', (started) => ({ mesh, keys, call } = started));

async function created(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await call('POST', path, body, headers);
  expect([path, response.status, response.body?.error]).toEqual([path, 201, undefined]);
  return response.body;
}

/** Approves a sandbox payment on its payer page, as a browser form post does. */
async function approve(redirectUrl: string): Promise<void> {
  const page = await fetch(redirectUrl);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  const answer = await fetch(redirectUrl, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ decision: 'approve', csrf }).toString(),
  });
  expect(answer.status).toBe(303);
}

const initiate = async (invoiceId: string) => (await created('/v1/payments/initiate', { invoice_id: invoiceId, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' }));
const invoiceOf = async (id: string) => (await call('GET', `/v1/invoices/${id}`)).body;

async function openInvoice(amount: number, name = 'Mutale Zulu') {
  const customer = await created('/v1/customers', { name, email: 'mutale@example.com' });
  return created('/v1/invoices', { customer: customer.id, amount, currency: 'zmw', description: 'Solar kit', status: 'open' });
}

async function paidInvoice(amount: number) {
  const invoice = await openInvoice(amount);
  await approve((await initiate(invoice.id)).redirectUrl);
  await eventually(async () => (await invoiceOf(invoice.id)).status === 'paid', 30_000, 'the invoice paid');
  return invoice;
}

async function creditNotesOf(invoiceId: string, count: number) {
  return eventually(async () => {
    const page = (await call('GET', `/v1/credit-notes?invoice=${invoiceId}&limit=100`)).body.data;
    return page.length === count ? page : undefined;
  }, 10_000, `${count} credit notes of ${invoiceId}`);
}

describe('credit notes that move no money', () => {
  it('credits an open invoice in part (it owes less), refuses while a payment is pending, and is paid for the rest; a credit of all it owes pays it', async () => {
    const invoice = await openInvoice(10_000);
    const note = await created('/v1/credit-notes', { invoice: invoice.id, amount: 2_500, reason: 'order_change', memo: 'One panel was not delivered', metadata: { ticket: 'T-42' } }, { 'idempotency-key': `credit-${invoice.id}` });
    expect(note).toMatchObject({
      object: 'credit_note', id: expect.stringMatching(/^cn_/), number: expect.stringMatching(/^CN-\d{6}$/), invoice: invoice.id, amount: 2_500, currency: 'zmw',
      reason: 'order_change', memo: 'One panel was not delivered', metadata: { ticket: 'T-42' }, payment: '', credited_to: 'amount_due',
    });
    // The same Idempotency-Key answers the same credit note: credited once.
    expect((await created('/v1/credit-notes', { invoice: invoice.id, amount: 2_500, reason: 'order_change', memo: 'One panel was not delivered', metadata: { ticket: 'T-42' } }, { 'idempotency-key': `credit-${invoice.id}` })).id).toBe(note.id);
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'open', total: 10_000, amount_due: 7_500, amount_credited: 2_500, amount_paid: 0 });

    const payment = await initiate(invoice.id);
    expect(payment).toMatchObject({ amount: 7_500 });
    const whilePending = await call('POST', '/v1/credit-notes', { invoice: invoice.id, amount: 100, reason: 'order_change' });
    expect([whilePending.status, whilePending.body.error.code]).toEqual([409, 'invoice_payment_pending']);
    await approve(payment.redirectUrl);
    await eventually(async () => (await invoiceOf(invoice.id)).status === 'paid', 30_000, 'the invoice paid for the rest');
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 7_500, amount_credited: 2_500 });

    const whole = await openInvoice(4_000, 'Bwalya Mumba');
    const all = await created('/v1/credit-notes', { invoice: whole.id, reason: 'product_unsatisfactory' });
    expect(all).toMatchObject({ amount: 4_000, credited_to: 'amount_due', memo: null });
    expect(await invoiceOf(whole.id)).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 0, amount_credited: 4_000 });
    const events = await eventually(async () => {
      const page = (await call('GET', `/v1/events?resource=${whole.id}&limit=100`)).body.data as { type: string }[];
      return page.some((event) => event.type === 'invoice.paid') && page.some((event) => event.type === 'credit_note.created') ? page : undefined;
    }, 20_000, 'credit_note.created and invoice.paid');
    expect(events.find((event) => event.type === 'credit_note.created')).toMatchObject({ data: { object: { id: all.id, credited_to: 'amount_due' } } });

    // Listed (refunds' credit notes too), retrieved, rendered; numbered from the one sequence.
    expect((await call('GET', `/v1/credit-notes/${note.id}`)).body).toEqual(note);
    expect((await call('GET', `/v1/credit-notes?customer=${whole.customer}`)).body).toMatchObject({ object: 'list', url: '/v1/credit-notes', data: [{ id: all.id }] });
    expect(Number(all.number.slice(3))).toBeGreaterThan(Number(note.number.slice(3)));
    const pdf = await fetch(`${mesh.baseUrl}/v1/credit-notes/${note.id}/pdf`, { headers: { 'x-api-key': keys.test } });
    expect([pdf.status, pdf.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('credits a paid invoice to the customer balance (a credit_note entry), which the next invoice consumes', async () => {
    const invoice = await paidInvoice(6_000);
    const note = await created('/v1/credit-notes', { invoice: invoice.id, amount: 1_500, reason: 'duplicate' });
    expect(note).toMatchObject({ credited_to: 'customer_balance', amount: 1_500, payment: '' });
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 6_000, amount_refunded: 0, amount_credited: 1_500 });
    expect((await call('GET', `/v1/customers/${invoice.customer}`)).body).toMatchObject({ balance: -1_500, currency: 'zmw' });
    const ledger = (await call('GET', `/v1/customers/${invoice.customer}/balance-transactions`)).body.data;
    expect(ledger).toEqual([expect.objectContaining({ type: 'credit_note', amount: -1_500, ending_balance: -1_500, invoice: invoice.id, credit_note: note.id })]);

    const next = await created('/v1/invoices', { customer: invoice.customer, amount: 4_000, currency: 'zmw', description: 'Battery', status: 'open' });
    expect(next).toMatchObject({ status: 'open', total: 4_000, amount_due: 2_500, starting_balance: -1_500, ending_balance: 0 });
    expect((await call('GET', `/v1/customers/${invoice.customer}`)).body).toMatchObject({ balance: 0 });
  });

  it('a partial refund and a credit note on one invoice add up to the cent; nothing more can be given back', async () => {
    const invoice = await paidInvoice(10_001);
    const refund = await created('/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer', amount: 3_333 });
    const credit = await created('/v1/credit-notes', { invoice: invoice.id, reason: 'order_change' });
    expect([refund.credited_to, refund.amount, credit.credited_to, credit.amount]).toEqual(['refund', 3_333, 'customer_balance', 6_668]);
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_refunded: 3_333, amount_credited: 6_668 });
    const noMoreCredit = await call('POST', '/v1/credit-notes', { invoice: invoice.id, reason: 'order_change' });
    expect([noMoreCredit.status, noMoreCredit.body.error.code]).toEqual([409, 'nothing_to_credit']);
    // Refused before any money moves (a refund carried out at the provider and then refused by invoicing would be refund_failed).
    const noMoreRefund = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'duplicate' });
    expect([noMoreRefund.status, noMoreRefund.body.error.code]).toEqual([409, 'invoice_refunded']);
    const notes = await creditNotesOf(invoice.id, 2);
    expect(notes.reduce((total: number, note: { amount: number }) => total + note.amount, 0)).toBe(10_001);
    // /v1/refunds lists credit notes as the specification says: every one of the invoice.
    expect((await call('GET', `/v1/refunds?invoice=${invoice.id}`)).body.data).toHaveLength(2);
  });

  it('credit notes racing refunds of one invoice never give back more than its total, and no refund is left unrecorded', async () => {
    const invoice = await paidInvoice(10_000);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => index % 2 === 0
      ? call('POST', '/v1/credit-notes', { invoice: invoice.id, reason: 'duplicate', amount: 2_000 })
      : call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'duplicate', amount: 2_000 })));
    // A refund the provider carried out but invoicing refused (over-credited) would answer 409 refund_failed.
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body.error.code).filter((code) => !['amount_too_large', 'nothing_to_credit', 'invoice_refunded'].includes(code))).toEqual([]);
    const notes = await creditNotesOf(invoice.id, 5);
    expect(notes.reduce((total: number, note: { amount: number }) => total + note.amount, 0)).toBe(10_000);
    const after = await invoiceOf(invoice.id);
    expect(after.amount_refunded + after.amount_credited).toBe(10_000);
  });

  it('answers bad input 400 (and a draft or void invoice 409) and changes nothing', async () => {
    const invoice = await openInvoice(5_000);
    for (const [body, param] of [
      [{ invoice: invoice.id, reason: 'order_change', amount: 0 }, 'amount'],
      [{ invoice: invoice.id, reason: 'order_change', amount: -5 }, 'amount'],
      [{ invoice: invoice.id, reason: 'order_change', amount: 1.5 }, 'amount'],
      [{ invoice: invoice.id, reason: 'order_change', amount: '100' }, 'amount'],
      [{ invoice: invoice.id, reason: 'requested_by_customer' }, 'reason'],
      [{ invoice: invoice.id }, 'reason'],
      [{ reason: 'order_change' }, 'invoice'],
      [{ invoice: invoice.id, reason: 'order_change', memo: 'x'.repeat(501) }, 'memo'],
      [{ invoice: 'in_missing', reason: 'order_change' }, 'invoice'],
      [{ invoice: invoice.id, reason: 'order_change', metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
    ] as const) {
      const refused = await call('POST', '/v1/credit-notes', body);
      expect([JSON.stringify(body).slice(0, 80), refused.status, refused.body.error.param]).toEqual([JSON.stringify(body).slice(0, 80), 400, param]);
    }
    const tooLarge = await call('POST', '/v1/credit-notes', { invoice: invoice.id, reason: 'order_change', amount: 5_001 });
    expect([tooLarge.status, tooLarge.body.error.code, tooLarge.body.error.param]).toEqual([400, 'amount_too_large', 'amount']);
    const customer = await created('/v1/customers', { name: 'Draft Owner', email: 'draft@example.com' });
    const draft = await created('/v1/invoices', { customer: customer.id, amount: 900, currency: 'zmw', description: 'Draft' });
    const onDraft = await call('POST', '/v1/credit-notes', { invoice: draft.id, reason: 'order_change' });
    expect([onDraft.status, onDraft.body.error.code]).toEqual([409, 'invoice_not_finalized']);
    const voided = await openInvoice(700, 'Void Owner');
    expect((await call('POST', `/v1/invoices/${voided.id}/void`)).status).toBe(200);
    const onVoid = await call('POST', '/v1/credit-notes', { invoice: voided.id, reason: 'order_change' });
    expect([onVoid.status, onVoid.body.error.code]).toEqual([409, 'invoice_void']);

    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'open', amount_due: 5_000, amount_credited: 0 });
    expect((await call('GET', `/v1/credit-notes?invoice=${invoice.id}`)).body.data).toEqual([]);
    expect((await call('GET', '/v1/credit-notes/cn_missing')).status).toBe(404);
  });
});
