import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Invoices through the gateway as an integrator uses them: both creation modes, finalize,
 * void (twice), list filters, the PDF read back as text, the invoice.created webhook at a
 * real receiver, and another app's invoice answering 404.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Acme Studio'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

async function createCustomer(name = 'Ada Lovelace', email = 'ada@example.com', key = keys.test) {
  const response = await api(mesh, key)('POST', '/v1/customers', { name, email });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

describe('/v1/invoices', () => {
  it('creates a draft, finalizes it with a number, voids it, and refuses a second void with 409', async () => {
    const customer = await createCustomer();
    const created = await call('POST', '/v1/invoices', { customer, amount: 12_345, description: 'Consulting, March', due_date: inDays(14) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: 'invoice', livemode: false, status: 'draft', number: null, customer, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com',
      currency: 'usd', subtotal: 12_345, discount: 0, total: 12_345, amount_due: 12_345, amount_paid: 0, due_date: inDays(14), payment_url: null,
      billing_reason: 'manual', subscription: null, period: null, finalized_at: null,
    });
    expect(created.body.lines).toEqual([{ id: expect.stringMatching(/^il_/), object: 'line_item', kind: 'manual', description: 'Consulting, March', quantity: 1, amount: 12_345, period: null, tax_amounts: [] }]);

    const finalized = await call('POST', `/v1/invoices/${created.body.id}/finalize`);
    expect(finalized.status).toBe(200);
    expect(finalized.body).toMatchObject({ status: 'open', number: expect.stringMatching(/^INV-\d{6}$/), payment_url: expect.stringMatching(new RegExp(`^${mesh.baseUrl}/pay/[A-Za-z0-9_-]{43}$`)) });
    // The link is reached by an unguessable token, never by the invoice id.
    expect(finalized.body.payment_url).not.toContain(created.body.id);
    expect((await call('POST', `/v1/invoices/${created.body.id}/finalize`)).body.error).toMatchObject({ code: 'invoice_not_draft' });

    const voided = await call('POST', `/v1/invoices/${created.body.id}/void`);
    expect([voided.status, voided.body.status, voided.body.number]).toEqual([200, 'void', finalized.body.number]);
    const again = await call('POST', `/v1/invoices/${created.body.id}/void`);
    expect([again.status, again.body.error.type, again.body.error.code]).toEqual([409, 'invalid_request_error', 'invoice_already_void']);
    expect((await call('GET', `/v1/invoices/${created.body.id}`)).body).toEqual(voided.body);
  });

  it('creates an invoice open at once from lines, numbered consecutively', async () => {
    const customer = await createCustomer();
    const first = await call('POST', '/v1/invoices', { customer, status: 'open', currency: 'eur', lines: [{ description: 'Seats', amount: 5_000, quantity: 5 }, { description: 'Setup', amount: 1_999 }] });
    const second = await call('POST', '/v1/invoices', { customer, status: 'open', amount: 100, description: 'Second' });
    expect([first.status, first.body.status, first.body.total, first.body.currency]).toEqual([201, 'open', 6_999, 'eur']);
    const sequence = (number: string) => Number(number.slice(4));
    expect(sequence(second.body.number)).toBe(sequence(first.body.number) + 1);
  });

  it('refuses bad input with 400 in the error shape, and an unknown, other-app or deleted customer', async () => {
    const customer = await createCustomer();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ due_date: '2026-02-30' }, 'due_date', 'parameter_invalid'],
      [{ due_date: '30/01/2027' }, 'due_date', 'parameter_invalid'],
      [{ amount: 12.5 }, 'amount', 'parameter_invalid'],
      [{ amount: -1 }, 'amount', 'parameter_invalid'],
      [{ amount: 1_000_000_000_000 }, 'amount', 'parameter_invalid'],
      [{ currency: 'zzz' }, 'currency', 'parameter_invalid'],
      [{ description: '' }, 'description', 'parameter_invalid'],
      [{ status: 'paid' }, 'status', 'parameter_invalid'],
      [{ surprise: 1 }, 'surprise', 'parameter_unknown'],
      [{ lines: [{ description: 'A', amount: 1.5 }] }, 'lines[0].amount', 'parameter_invalid'],
    ];
    for (const [change, param, code] of cases) {
      const response = await call('POST', '/v1/invoices', { customer, amount: 100, description: 'Fee', ...change });
      expect([param, response.status, response.body.error.param, response.body.error.code]).toEqual([param, 400, param, code]);
    }
    const liveCustomer = await createCustomer('Live', 'live@example.com', keys.live);
    const deleted = await createCustomer('Gone', 'gone@example.com');
    expect((await call('DELETE', `/v1/customers/${deleted}`)).status).toBe(200);
    for (const [other, status, code] of [['cus_unknown', 400, 'resource_missing'], [liveCustomer, 400, 'resource_missing'], [deleted, 409, 'customer_deleted']] as const) {
      const response = await call('POST', '/v1/invoices', { customer: other, amount: 100, description: 'Fee' });
      expect([other, response.status, response.body.error.code, response.body.error.param]).toEqual([other, status, code, 'customer']);
    }
    expect((await call('GET', `/v1/invoices?customer=${customer}`)).body.total).toBe(0);
  });

  it('lists newest first with the customer and status filters; another app sees 404 and an empty list', async () => {
    const ada = await createCustomer();
    const bob = await createCustomer('Bob', 'bob@example.com');
    const a1 = (await call('POST', '/v1/invoices', { customer: ada, amount: 1, description: 'a1' })).body;
    const b1 = (await call('POST', '/v1/invoices', { customer: bob, amount: 1, description: 'b1', status: 'open' })).body;
    const a2 = (await call('POST', '/v1/invoices', { customer: ada, amount: 1, description: 'a2', status: 'open' })).body;
    const ids = async (query: string) => (await call('GET', `/v1/invoices?${query}`)).body.data.map((invoice: { id: string }) => invoice.id);
    expect(await ids(`customer=${ada}`)).toEqual([a2.id, a1.id]);
    expect(await ids(`customer=${ada}&status=draft`)).toEqual([a1.id]);
    expect((await ids('status=open')).slice(0, 2)).toEqual([a2.id, b1.id]);
    expect(await ids('subscription=sub_none')).toEqual([]);
    expect((await call('GET', '/v1/invoices?status=late')).status).toBe(400);
    const page = await call('GET', `/v1/invoices?customer=${ada}&limit=1`);
    expect(page.body).toMatchObject({ object: 'list', url: '/v1/invoices', total: 2, limit: 1, offset: 0, has_more: true });

    const live = api(mesh, keys.live);
    for (const path of [`/v1/invoices/${a1.id}`, `/v1/invoices/${a1.id}/pdf`]) expect([path, (await live('GET', path)).status]).toEqual([path, 404]);
    expect((await live('POST', `/v1/invoices/${a1.id}/void`)).status).toBe(404);
    expect((await live('GET', '/v1/invoices')).body.data).toEqual([]);
    expect((await api(mesh, keys.testReadOnly)('POST', `/v1/invoices/${a1.id}/void`)).status).toBe(403);
  });

  it('serves the PDF with its filename, readable as text: seller, customer, number, lines, totals, payment link', async () => {
    const customer = await createCustomer('Zoë Ünal', 'zoe@example.com');
    const { body: invoice } = await call('POST', '/v1/invoices', { customer, status: 'open', lines: [{ description: 'Design sprint', amount: 250_000, quantity: 2 }, { description: 'Hosting', amount: 4_999 }] });
    const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoice.id}/pdf`, { headers: { 'x-api-key': keys.test } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${invoice.number}.pdf"`);
    const text = pdfText(new Uint8Array(await response.arrayBuffer()));
    for (const expected of ['Acme Studio', 'Zoë Ünal', invoice.number, 'Design sprint', 'Hosting', '$2,500.00', '$49.99', '$2,549.99', invoice.payment_url]) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
  });

  it('e-mails the invoice at finalization and on resend through SMTP, the PDF attached; resend of a draft or void invoice answers 409', async () => {
    const recipient = `payer-${Date.now()}@example.com`;
    const customer = await createCustomer('Grace Hopper', recipient);
    const mailsTo = () => mesh.mail.messages().filter((mail) => mail.envelope.to.includes(recipient));
    const { body: draft } = await call('POST', '/v1/invoices', { customer, amount: 4_200, description: 'Compiler audit' });
    const notYet = await call('POST', `/v1/invoices/${draft.id}/resend`);
    expect([notYet.status, notYet.body.error.type, notYet.body.error.code]).toEqual([409, 'invalid_request_error', 'invoice_not_finalized']);

    const { body: open } = await call('POST', `/v1/invoices/${draft.id}/finalize`);
    await eventually(async () => mailsTo().length === 1, 30_000, 'the mail at finalization');
    const resent = await call('POST', `/v1/invoices/${draft.id}/resend`, undefined, { 'Idempotency-Key': `resend-${draft.id}` });
    expect([resent.status, resent.body]).toEqual([200, open]);
    // The same Idempotency-Key again: the first answer, and no third mail.
    expect((await call('POST', `/v1/invoices/${draft.id}/resend`, undefined, { 'Idempotency-Key': `resend-${draft.id}` })).headers.get('idempotent-replayed')).toBe('true');
    const mails = await eventually(async () => mailsTo().length >= 2 && mailsTo(), 30_000, 'the resent mail');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(mailsTo()).toHaveLength(2);
    for (const mail of mails) {
      expect(mail.parsed.subject).toBe(`Invoice ${open.number} from Acme Studio`);
      expect(mail.parsed.text).toContain(open.payment_url);
      expect(mail.parsed.attachments.map((attachment) => attachment.filename)).toEqual([`${open.number}.pdf`]);
      const text = pdfText(mail.parsed.attachments[0].content);
      for (const expected of ['Acme Studio', 'Grace Hopper', open.number, '$42.00']) expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }

    expect((await call('POST', `/v1/invoices/${draft.id}/void`)).status).toBe(200);
    const afterVoid = await call('POST', `/v1/invoices/${draft.id}/resend`);
    expect([afterVoid.status, afterVoid.body.error.code]).toEqual([409, 'invoice_void']);
    expect((await api(mesh, keys.live)('POST', `/v1/invoices/${draft.id}/resend`)).status).toBe(404);
  });

  it('/v1/account: the seller details and logo it sets are printed on the PDF and named in the e-mail; bad input is a 400 that changes nothing', async () => {
    const seller = await mesh.createAccount('Kafue Fibre');
    const sellerCall = api(mesh, seller.keys.test);
    expect((await sellerCall('GET', '/v1/account')).body).toMatchObject({ object: 'account', name: 'Kafue Fibre', legal_name: null, address: null, logo: null, updated: null });
    // A 1×1 PNG, the smallest logo there is.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const update = {
      legal_name: 'Kafue Fibre Networks Limited', tax_id: 'TPIN 1002003004', registration_number: '120190001234',
      address: { line1: 'Plot 4512, Great East Road', city: 'Lusaka', postal_code: '10101', country: 'zm' },
      support_email: 'billing@kafue.example', support_phone: '+260 211 123456', brand_color: '#0A7D3B',
      invoice_footer: 'Pay by mobile money or to Zanaco account 0123456789.', logo: `data:image/png;base64,${png}`,
    };
    const updated = await sellerCall('POST', '/v1/account', update);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      legal_name: 'Kafue Fibre Networks Limited', address: { line1: 'Plot 4512, Great East Road', line2: null, city: 'Lusaka', country: 'ZM' }, brand_color: '#0a7d3b',
      logo: { content_type: 'image/png', size: 70, data_url: `data:image/png;base64,${png}` }, updated: expect.any(Number),
    });
    for (const [body, param] of [
      [{ brand_color: 'green' }, 'brand_color'], [{ address: { country: 'Zambia' } }, 'address.country'], [{ support_email: 'not-an-address' }, 'support_email'],
      [{ logo: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' }, 'logo'], [{ logo: `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').toString('base64')}` }, 'logo'],
      [{ legal_name: 'x'.repeat(201) }, 'legal_name'], [{ colour: '#000000' }, 'colour'],
    ] as const) {
      const refused = await sellerCall('POST', '/v1/account', body);
      expect([refused.status, refused.body.error?.param ?? refused.body.error?.errors?.[0]?.param]).toEqual([400, param]);
    }
    expect((await sellerCall('GET', '/v1/account')).body).toEqual(updated.body);
    expect((await api(mesh, seller.keys.sandboxPublishable)('GET', '/v1/account')).status).toBe(403);
    expect((await api(mesh, seller.keys.testReadOnly)('POST', '/v1/account', { legal_name: 'Nope' })).status).toBe(403);

    const recipient = `kafue-${Date.now()}@example.com`;
    const customer = (await sellerCall('POST', '/v1/customers', { name: 'Mutale Zulu', email: recipient })).body.id;
    const { body: invoice } = await sellerCall('POST', '/v1/invoices', { customer, status: 'open', amount: 35_000, currency: 'zmw', description: 'Fibre 50, December' });
    const response = await fetch(`${mesh.baseUrl}/v1/invoices/${invoice.id}/pdf`, { headers: { 'x-api-key': seller.keys.test } });
    const text = pdfText(new Uint8Array(await response.arrayBuffer()));
    for (const expected of ['Kafue Fibre Networks Limited', 'Plot 4512, Great East Road', '10101 Lusaka', 'ZM', 'Tax ID: TPIN 1002003004', 'Registration no.: 120190001234',
      'Zanaco account 0123456789', 'billing@kafue.example · +260 211 123456', 'Mutale Zulu']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    const mail = await eventually(async () => mesh.mail.messages().find((message) => message.envelope.to.includes(recipient)), 30_000, 'the invoice mail');
    expect(mail.parsed.subject).toBe(`Invoice ${invoice.number} from Kafue Fibre Networks Limited`);
    expect(mail.parsed.text).toContain('billing@kafue.example or +260 211 123456');
    expect(pdfText(mail.parsed.attachments[0].content)).toContain('Tax ID: TPIN 1002003004');

    // null clears a field; the logo goes too.
    const cleared = await sellerCall('POST', '/v1/account', { tax_id: null, logo: null, address: null });
    expect(cleared.body).toMatchObject({ tax_id: null, logo: null, address: null, legal_name: 'Kafue Fibre Networks Limited' });
  });

  it('delivers invoice.created, with the invoice and its payment link, and invoice.voided to a webhook endpoint', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/invoices`, events: ['invoice.created', 'invoice.voided'] });
    expect(endpoint.status).toBe(201);
    const customer = await createCustomer();
    const { body: draft } = await call('POST', '/v1/invoices', { customer, amount: 777, description: 'Hooked' });
    const { body: open } = await call('POST', `/v1/invoices/${draft.id}/finalize`);
    const { body: voided } = await call('POST', `/v1/invoices/${draft.id}/void`);
    const deliveries = await eventually(async () => {
      const got = await receiver.received('/invoices');
      return got.length >= 2 ? got : undefined;
    }, 60_000, 'invoice webhooks');
    const events = deliveries.map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as { type: string; data: { object: unknown; source?: string } });
    expect(events.map((event) => event.type).sort()).toEqual(['invoice.created', 'invoice.voided']);
    expect(events.find((event) => event.type === 'invoice.created')!.data).toEqual({ object: open, source: 'manual' });
    expect(events.find((event) => event.type === 'invoice.voided')!.data).toEqual({ object: voided });
  });
});

/** The text of a PDF as poppler's pdftotext reads it (docs/development.md#what-npm-test-needs: tests need poppler-utils). */
function pdfText(pdf: Uint8Array | Buffer): string {
  const file = join(mkdtempSync(join(tmpdir(), 'recur-pdf-')), 'invoice.pdf');
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
}
