import { randomBytes } from 'node:crypto';
import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { FakePawapay } from '../../../apps/payments/test/fake-pawapay';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * One invoice, one collection, tried as a new user would through the gateway, every service its
 * own process on Kafka: whatever races — a void, a wallet, a provider's late success, a second
 * payer — an invoice is collected at most once, and money that arrives for an invoice that no
 * longer owes it is given back, visibly. An invoice with nothing due is paid at finalization.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
let live: ReturnType<typeof api>;
const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

beforeAll(async () => {
  await pawapay.start();
  [mesh, receiver] = await Promise.all([
    startMesh({
      env: {
        'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
        payments: { PAWAPAY_BASE_URL: pawapay.baseUrl, PAWAPAY_API_TOKEN: pawapay.token, PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem, PAYMENT_STATUS_CHECK_AFTER_MS: '60000' },
      },
    }),
    startWebhookReceiver(),
  ]);
  ({ keys } = await mesh.createAccount('Chipata Solar'));
  call = api(mesh, keys.test);
  live = api(mesh, keys.live);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop(), pawapay.stop()]);
}, 60_000);

async function openInvoice(client: ReturnType<typeof api>, amount: number, customerId?: string) {
  const customer = customerId ?? (await client('POST', '/v1/customers', { name: 'Thandiwe Phiri', email: `thandiwe-${randomBytes(4).toString('hex')}@example.com` })).body.id;
  const invoice = await client('POST', '/v1/invoices', { customer, amount, currency: 'zmw', description: 'Solar lease, June', status: 'open' });
  expect(invoice.status).toBe(201);
  return invoice.body as { id: string; number: string; payment_url: string; status: string };
}

/** A payer opening a page: GET it for the CSRF cookie and token its form carries. */
async function openPage(url: string): Promise<{ url: string; cookie: string; csrf: string }> {
  const page = await fetch(url);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  return { url, cookie, csrf };
}

/** The payer posting the form of a page they opened, as the page would. */
const submitOpened = (opened: { url: string; cookie: string; csrf: string }, fields: Record<string, string>): Promise<Response> =>
  fetch(opened.url, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: opened.cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ ...fields, csrf: opened.csrf }).toString(),
  });

const submitPage = async (url: string, fields: Record<string, string>): Promise<Response> => submitOpened(await openPage(url), fields);
const approve = (redirectUrl: string) => submitPage(redirectUrl, { decision: 'approve' });
const initiate = (client: ReturnType<typeof api>, invoiceId: string, phone: string = SANDBOX_MAGIC_NUMBERS.succeed) =>
  client('POST', '/v1/payments/initiate', { invoice_id: invoiceId, phone_number: phone, provider: 'MTN_MOMO_ZMB' });

describe('one invoice, one collection', () => {
  it('a payer page opened before the invoice was voided refuses Approve (409), and nothing is collected', async () => {
    const invoice = await openInvoice(call, 4_200);
    const payment = (await initiate(call, invoice.id)).body;
    expect(payment.status).toBe('pending');
    // The payer opens the page while the invoice is still open; it is voided before they press Approve.
    const opened = await openPage(payment.redirectUrl);
    expect((await call('POST', `/v1/invoices/${invoice.id}/void`)).body.status).toBe('void');

    const approved = await submitOpened(opened, { decision: 'approve' });
    expect(approved.status).toBe(409);
    expect(await approved.text()).toContain('voided');
    expect((await call('GET', `/v1/payments/${payment.id}`)).body).toMatchObject({ status: 'canceled', failure_code: 'invoice_void', unapplied_reason: null, refund: null });
    // The page says so to a payer who comes back to it, and offers no Approve.
    const page = await (await fetch(payment.redirectUrl)).text();
    expect(page).toContain('data-status="canceled"');
    expect(page).not.toContain('value="approve"');
    expect((await call('GET', `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'void', amount_paid: 0 });
  });

  it('voiding cancels the pending sandbox payment by itself (InvoiceVoided), before any payer comes back', async () => {
    const invoice = await openInvoice(call, 1_300);
    const payment = (await initiate(call, invoice.id)).body;
    await call('POST', `/v1/invoices/${invoice.id}/void`);
    const canceled = await eventually(async () => {
      const current = (await call('GET', `/v1/payments/${payment.id}`)).body;
      return current.status === 'canceled' ? current : undefined;
    }, 60_000, 'the pending payment canceled');
    expect(canceled).toMatchObject({ failure_code: 'invoice_void', settled_at: expect.any(Number) });
  });

  it('a live deposit that completes at pawaPay after the void is returned in full: unapplied_reason, an automatic refund at pawaPay, no credit note', async () => {
    const invoice = await openInvoice(live, 9_900);
    const payment = (await initiate(live, invoice.id, '+260971234567')).body;
    const depositId = new URL(payment.redirectUrl).pathname.split('/').pop()!;
    expect((await live('POST', `/v1/invoices/${invoice.id}/void`)).body.status).toBe('void');
    // A deposit pushed to a phone cannot be called back at pawaPay: it stays pending ...
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await live('GET', `/v1/payments/${payment.id}`)).body.status).toBe('pending');
    // ... and the payer approves it anyway.
    pawapay.finish(depositId, 'COMPLETED');
    expect((await pawapay.sendCallback(`${mesh.baseUrl}/callbacks/pawapay`, depositId)).status).toBe(200);

    const returned = await eventually(async () => {
      const current = (await live('GET', `/v1/payments/${payment.id}`)).body;
      return current.refund ? current : undefined;
    }, 60_000, 'the unapplied payment marked for return');
    expect(returned).toMatchObject({ status: 'succeeded', unapplied_reason: 'invoice_void', refund: expect.stringMatching(/^re_/) });
    const atPawapay = await eventually(async () => [...pawapay.refunds.values()].find((refund) => refund.depositId === depositId), 60_000, 'the refund asked of pawaPay');
    expect(atPawapay).toMatchObject({ amount: '99.00', currency: 'ZMW' });
    pawapay.finishRefund(atPawapay.refundId, 'COMPLETED');
    expect((await pawapay.sendRefundCallback(`${mesh.baseUrl}/callbacks/pawapay/refunds`, atPawapay.refundId)).status).toBe(200);
    const refund = await eventually(async () => {
      const current = (await live('GET', `/v1/refunds/${returned.refund}`)).body;
      return current.status === 'succeeded' ? current : undefined;
    }, 60_000, 'the return completed');
    expect(refund).toMatchObject({ object: 'refund', invoice: invoice.id, payment: payment.id, amount: 9_900, currency: 'zmw', reason: 'unapplied_payment' });
    // The invoice never took the money: still void, no credit note; one PaymentUnapplied event.
    expect((await live('GET', `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'void', amount_paid: 0 });
    expect((await live('GET', `/v1/refunds?invoice=${invoice.id}`)).body.total).toBe(0);
    const events = await queryDatabase<{ type: string }>(mesh.databaseUrls.payments, 'SELECT type FROM outbox_events WHERE key = $1 ORDER BY seq', [payment.id]);
    expect(events.map((event) => event.type)).toEqual(['recur.payments.v1.PaymentSucceeded', 'recur.payments.v1.PaymentUnapplied']);
    expect([...pawapay.refunds.values()].filter((entry) => entry.depositId === depositId)).toHaveLength(1);
  });

  it('a wallet paying at finalization and a payer paying at the same moment collect the invoice once', async () => {
    const customer = (await call('POST', '/v1/customers', { name: 'Mutale Zulu', email: 'mutale@example.com' })).body.id as string;
    const wallet = (await call('POST', '/v1/wallets', { customer, currency: 'zmw' })).body;
    const topUp = (await call('POST', `/v1/wallets/${wallet.id}/top-ups`, { amount: 10_000 })).body;
    const hosted = await submitPage(topUp.payment_url, { provider: 'MTN_MOMO_ZMB', phone_number: SANDBOX_MAGIC_NUMBERS.succeed });
    expect(hosted.status).toBe(303);
    expect((await approve(new URL(hosted.headers.get('location')!, mesh.baseUrl).toString())).status).toBe(303);
    await eventually(async () => (await call('GET', `/v1/wallets/${wallet.id}`)).body.balance === 10_000, 60_000, 'the wallet topped up');

    const rounds = 5;
    const invoices: string[] = [];
    const outcomes: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      // The wallet pays the invoice when its InvoiceFinalized arrives; the payer starts and approves at once.
      const invoice = await openInvoice(call, 600, customer);
      invoices.push(invoice.id);
      const initiated = await initiate(call, invoice.id);
      if (initiated.status !== 201) {
        outcomes.push(`${initiated.status} ${initiated.body.error.code}`);
        continue;
      }
      const approved = await approve(initiated.body.redirectUrl);
      outcomes.push(`201 approve ${approved.status}`);
    }
    for (const invoiceId of invoices) {
      await eventually(async () => (await call('GET', `/v1/invoices/${invoiceId}`)).body.status === 'paid', 60_000, `invoice ${invoiceId} paid`);
    }
    // Settled: every payment either kept (applied to its invoice), returned, canceled or failed.
    const collected = await eventually(async () => {
      const perInvoice = new Map<string, number>(invoices.map((id) => [id, 0]));
      for (const invoiceId of invoices) {
        const payments = (await call('GET', `/v1/payments?invoice=${invoiceId}`)).body.data as { status: string; amount: number; unapplied_reason: string | null; refund: string | null }[];
        if (payments.some((payment) => payment.status === 'pending')) return undefined;
        for (const payment of payments) {
          if (payment.status !== 'succeeded') continue;
          if (!payment.refund) perInvoice.set(invoiceId, perInvoice.get(invoiceId)! + payment.amount);
          else if ((await call('GET', `/v1/refunds/${payment.refund}`)).body.status !== 'succeeded') return undefined;
        }
      }
      const ledger = (await call('GET', `/v1/wallets/${wallet.id}/transactions?limit=100`)).body.data as { kind: string; amount: number; invoice: string | null }[];
      for (const entry of ledger) if (entry.kind === 'invoice_payment') perInvoice.set(entry.invoice!, perInvoice.get(entry.invoice!)! - entry.amount);
      return perInvoice;
    }, 60_000, 'every payment settled');
    expect({ outcomes, collected: Object.fromEntries(collected) }).toEqual({ outcomes, collected: Object.fromEntries(invoices.map((id) => [id, 600])) });
  });

  it('an invoice with nothing due is paid at finalization (invoice.paid, no payment), and paying it answers 409 invoice_paid', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/zero`, events: ['invoice.paid'] });
    const invoice = await openInvoice(call, 0);
    expect(invoice).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: 0, paid_at: expect.any(Number) });
    const customer = (await call('POST', '/v1/customers', { name: 'Bupe Tembo', email: 'bupe@example.com' })).body.id;
    const draft = (await call('POST', '/v1/invoices', { customer, amount: 0, currency: 'zmw', description: 'Free month' })).body;
    expect((await call('POST', `/v1/invoices/${draft.id}/finalize`)).body).toMatchObject({ status: 'paid', number: expect.stringMatching(/^INV-/) });
    const refused = await initiate(call, invoice.id);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'invoice_paid']);

    const events = await eventually(async () => {
      const got = await receiver.received('/zero');
      return got.length >= 2 ? got : undefined;
    }, 60_000, 'two invoice.paid webhooks');
    const paid = events.map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as { type: string; data: { object: { id: string }; payment: string | null } });
    expect(paid.map((event) => [event.type, event.data.object.id, event.data.payment]).sort()).toEqual([['invoice.paid', draft.id, null], ['invoice.paid', invoice.id, null]].sort());
  });
});

describe('payment methods', () => {
  it('are saved with consent, the first becomes the default, listed default first, switched, detached; bad input answers 400 and saves nothing', async () => {
    const customer = (await call('POST', '/v1/customers', { name: 'Kalaba Mumba', email: 'kalaba@example.com' })).body.id as string;
    const path = `/v1/customers/${customer}/payment-methods`;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB', consent: false }, 'consent_required', 'consent'],
      [{ phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' }, 'parameter_missing', 'consent'],
      [{ phone_number: '0971234567', provider: 'MTN_MOMO_ZMB', consent: true }, 'parameter_invalid', 'phone_number'],
      [{ phone_number: '+254712345678', provider: 'MTN_MOMO_ZMB', consent: true }, 'phone_number_provider_mismatch', 'phone_number'],
      [{ phone_number: '+260971234567', provider: 'PAYPAL', consent: true }, 'parameter_invalid', 'provider'],
    ];
    for (const [body, code, param] of cases) {
      const refused = await call('POST', path, body);
      expect({ body, status: refused.status, code: refused.body.error?.code, param: refused.body.error?.param }).toEqual({ body, status: 400, code, param });
    }
    expect((await call('GET', path)).body).toMatchObject({ object: 'list', total: 0, data: [] });

    const first = await call('POST', path, { phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB', consent: true });
    expect(first).toMatchObject({
      status: 201,
      body: { object: 'payment_method', id: expect.stringMatching(/^pm_/), customer, type: 'mobile_money', phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB', default: true, livemode: false, consent: { given_at: expect.any(Number), source: 'api' } },
    });
    // The same number again is the same method; a second number is not the default unless asked.
    expect((await call('POST', path, { phone_number: ' +260971234567', provider: 'MTN_MOMO_ZMB', consent: true })).body.id).toBe(first.body.id);
    const second = (await call('POST', path, { phone_number: '+260961234567', provider: 'AIRTEL_OAPI_ZMB', consent: true })).body;
    expect(second.default).toBe(false);
    expect((await call('GET', path)).body.data.map((method: { id: string }) => method.id)).toEqual([first.body.id, second.id]);

    expect((await call('POST', `${path}/${second.id}/default`)).body).toMatchObject({ id: second.id, default: true });
    expect((await call('GET', path)).body.data.map((method: { id: string; default: boolean }) => [method.id, method.default])).toEqual([[second.id, true], [first.body.id, false]]);
    expect((await call('DELETE', `${path}/${second.id}`)).body).toMatchObject({ id: second.id, default: false });
    expect((await call('GET', path)).body).toMatchObject({ total: 1, data: [{ id: first.body.id, default: false }] });
    expect((await call('POST', `${path}/${second.id}/default`)).status).toBe(404);

    // Another customer, another app and a read-only key see or change nothing of it.
    const other = (await call('POST', '/v1/customers', { name: 'Other', email: 'other@example.com' })).body.id as string;
    expect((await call('POST', `/v1/customers/${other}/payment-methods/${first.body.id}/default`)).status).toBe(404);
    expect((await live('GET', path)).status).toBe(404);
    expect((await api(mesh, keys.testReadOnly)('POST', path, { phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB', consent: true })).status).toBe(403);
    expect((await api(mesh, keys.testReadOnly)('GET', path)).body.total).toBe(1);
    expect((await call('GET', '/v1/customers/cus_nobody/payment-methods')).status).toBe(404);
  });
});

describe('collection_method charge_automatically', () => {
  async function customerWithMethod(phone: string | undefined) {
    const customer = (await call('POST', '/v1/customers', { name: 'Nsofwa Banda', email: `nsofwa-${randomBytes(4).toString('hex')}@example.com` })).body.id as string;
    if (phone) expect((await call('POST', `/v1/customers/${customer}/payment-methods`, { phone_number: phone, provider: 'MTN_MOMO_ZMB', consent: true })).status).toBe(201);
    return customer;
  }
  const charged = (customer: string, amount: number) =>
    call('POST', '/v1/invoices', { customer, amount, currency: 'zmw', description: 'Solar lease, July', status: 'open', collection_method: 'charge_automatically' });
  const settled = (invoiceId: string, status: string) =>
    eventually(async () => {
      const current = (await call('GET', `/v1/invoices/${invoiceId}`)).body;
      return current.status === status ? current : undefined;
    }, 60_000, `invoice ${invoiceId} ${status}`);

  it('records a push its provider cannot take as failed (the rule\'s code) without calling pawaPay, and the invoice goes to dunning', async () => {
    const customer = (await live('POST', '/v1/customers', { name: 'Mutinta Hamoonga', email: `mutinta-${randomBytes(4).toString('hex')}@example.com` })).body.id as string;
    // No provider named: pawaPay's predict-provider names the number's (MTN MoMo Zambia).
    const method = await live('POST', `/v1/customers/${customer}/payment-methods`, { phone_number: '+260961234567', consent: true });
    expect(method).toMatchObject({ status: 201, body: { provider: 'MTN_MOMO_ZMB', default: true } });
    const invoice = (await live('POST', '/v1/invoices', { customer, amount: 2_500, currency: 'usd', description: 'Hosting, July', status: 'open', collection_method: 'charge_automatically' })).body;
    const failed = await eventually(async () => {
      const current = (await live('GET', `/v1/invoices/${invoice.id}`)).body;
      return current.status === 'failed' ? current : undefined;
    }, 60_000, 'the invoice failed');
    expect(failed).toMatchObject({ amount_due: 2_500 });
    expect((await live('GET', `/v1/payments?invoice=${invoice.id}`)).body.data).toMatchObject([{ status: 'failed', failure_code: 'currency_not_supported_by_provider', provider: 'MTN_MOMO_ZMB' }]);
    expect(pawapay.requests.filter((request) => request.path === '/v2/deposits' && (request.body as { clientReferenceId?: string } | undefined)?.clientReferenceId === invoice.id)).toEqual([]);
  });

  it('pushes a prompt to the default payment method at finalization: paid with no page opened', async () => {
    const customer = await customerWithMethod(SANDBOX_MAGIC_NUMBERS.succeed);
    const invoice = await charged(customer, 2_750);
    expect(invoice.body).toMatchObject({ status: 'open', collection_method: 'charge_automatically' });
    const paid = await settled(invoice.body.id, 'paid');
    expect(paid).toMatchObject({ amount_paid: 2_750, amount_due: 0 });
    const payments = (await call('GET', `/v1/payments?invoice=${invoice.body.id}`)).body.data;
    expect(payments).toMatchObject([{ status: 'succeeded', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, amount: 2_750 }]);
    // Sent invoices stay sent: nothing is pushed for them.
    const sent = (await call('POST', '/v1/invoices', { customer, amount: 100, currency: 'zmw', description: 'Sent', status: 'open' })).body;
    expect(sent.collection_method).toBe('send_invoice');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/payments?invoice=${sent.id}`)).body.total).toBe(0);
  });

  it('a subscription charged automatically is paid at creation and at renewal on its test clock, with no page opened', async () => {
    const start = Date.UTC(2031, 0, 1) / 1000;
    const clock = (await call('POST', '/v1/test-clocks', { name: 'auto collection', frozen_time: start })).body.id;
    const customer = (await call('POST', '/v1/customers', { name: 'Chileshe Mwape', email: 'chileshe@example.com', test_clock: clock })).body.id as string;
    expect((await call('POST', `/v1/customers/${customer}/payment-methods`, { phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB', consent: true })).status).toBe(201);
    const plan = (await call('POST', '/v1/plans', { name: 'Solar home kit', pricing_model: 'flat_rate', amount_monthly: 4_500, currency: 'zmw' })).body;
    const subscription = await call('POST', '/v1/subscriptions', { customer, plan: plan.id, billing_interval: 'monthly', collection_method: 'charge_automatically' });
    expect(subscription.body).toMatchObject({ status: 'active', collection_method: 'charge_automatically' });
    const paidInvoices = (count: number) => eventually(async () => {
      const list = (await call('GET', `/v1/invoices?subscription=${subscription.body.id}&status=paid`)).body;
      // The page and its total are two reads: wait until the page itself holds them all.
      return list.total === count && list.data.length === count ? list.data : undefined;
    }, 60_000, `${count} paid invoice(s) of the subscription`);
    const [first] = await paidInvoices(1);
    expect(first).toMatchObject({ billing_reason: 'subscription_create', collection_method: 'charge_automatically', amount_paid: 4_500 });

    expect((await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: Date.UTC(2031, 1, 1, 1) / 1000 })).status).toBe(200);
    const renewed = await paidInvoices(2);
    expect(renewed.map((invoice: { billing_reason: string }) => invoice.billing_reason).sort()).toEqual(['subscription_create', 'subscription_cycle']);
    const payments = await Promise.all(renewed.map(async (invoice: { id: string }) => (await call('GET', `/v1/payments?invoice=${invoice.id}`)).body.data));
    expect(payments.map((list: { status: string; phone_number: string }[]) => list.map((payment) => [payment.status, payment.phone_number]))).toEqual([
      [['succeeded', SANDBOX_MAGIC_NUMBERS.succeed]], [['succeeded', SANDBOX_MAGIC_NUMBERS.succeed]],
    ]);
  });

  it('a number whose wallet is short fails the invoice (invoice.payment_failed, its smart retries planned); no default method leaves it open; a bad value is a 400', async () => {
    const failing = await charged(await customerWithMethod(SANDBOX_MAGIC_NUMBERS.fail), 1_000);
    await settled(failing.body.id, 'failed');
    expect((await call('GET', `/v1/payments?invoice=${failing.body.id}`)).body.data).toMatchObject([{ status: 'failed', failure_code: 'insufficient_funds' }]);

    const without = await charged(await customerWithMethod(undefined), 1_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/invoices/${without.body.id}`)).body.status).toBe('open');
    expect((await call('GET', `/v1/payments?invoice=${without.body.id}`)).body.total).toBe(0);

    const bad = await call('POST', '/v1/invoices', { customer: await customerWithMethod(undefined), amount: 1, currency: 'zmw', description: 'x', collection_method: 'direct_debit' });
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'parameter_invalid', 'collection_method']);
  });
});
