import { randomBytes } from 'node:crypto';
import { connectDatabase, queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { FakePawapay } from '../../../apps/payments/test/fake-pawapay';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Prepaid wallets as a new user meets them, through the gateway only, every service its own
 * process on Kafka, webhooks at a real receiver: a wallet topped up through the sandbox payer
 * page (its invoice says top-up), a renewal on a test clock paid by the wallet, the low-balance
 * event once per crossing, and an auto recharge that settles by itself on the sandbox. Live, at
 * a local stand-in of pawaPay: an auto recharge pushed as a pawaPay deposit, settled once by its
 * callbacks racing the status check, and the refund of an invoice the wallet paid.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
let secret: string;

const HOOK = '/wallet-hooks';
const DAY = 86_400;
const START = Date.UTC(2030, 0, 1) / 1000;
const FEBRUARY = Date.UTC(2030, 1, 1) / 1000;
const MARCH = Date.UTC(2030, 2, 1) / 1000;
const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

beforeAll(async () => {
  await pawapay.start();
  [mesh, receiver] = await Promise.all([
    startMesh({
      env: {
        'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
        // Live payments go to the local pawaPay stand-in; the janitor's status checks start soon after initiation.
        payments: { PAWAPAY_BASE_URL: pawapay.baseUrl, PAWAPAY_API_TOKEN: pawapay.token, PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem, PAYMENT_STATUS_CHECK_AFTER_MS: '500' },
      },
    }),
    startWebhookReceiver(),
  ]);
  ({ keys } = await mesh.createAccount('Kafue Water'));
  call = api(mesh, keys.test);
  const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}${HOOK}`, events: ['wallet.topped_up', 'wallet.low_balance', 'wallet.auto_recharge', 'invoice.created'] });
  expect(endpoint.status).toBe(201);
  secret = endpoint.body.secret;
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop(), pawapay.stop()]);
}, 60_000);

interface Envelope {
  id: string;
  type: string;
  data: { object: { id: string; balance?: number; billing_reason?: string }; source?: string; threshold?: number; top_up?: { id: string; invoice: string; automatic: boolean; status: string; payment: string | null } };
}

/** Signed events at the receiver, verified with the endpoint's secret, one per event id. */
async function delivered(type?: string): Promise<Envelope[]> {
  const byId = new Map<string, Envelope>();
  for (const arrival of await receiver.received(HOOK)) {
    const event = constructEvent(arrival.body, arrival.headers, secret) as Envelope;
    byId.set(event.id, event);
  }
  return [...byId.values()].filter((event) => type === undefined || event.type === type);
}

async function untilEvents(type: string, count: number): Promise<Envelope[]> {
  return eventually(async () => {
    const events = await delivered(type);
    return events.length >= count ? events : undefined;
  }, 60_000, `${count} ${type} webhook(s)`);
}

/** The payer on the hosted payment page (provider and number), then Approve on the sandbox payer page: plain form posts. */
async function payThroughPayerPage(paymentUrl: string): Promise<void> {
  const session = async (url: string) => {
    const page = await fetch(url);
    expect(page.status).toBe(200);
    return { cookie: page.headers.get('set-cookie')!.split(';')[0], csrf: /name="csrf" value="([^"]+)"/.exec(await page.text())![1] };
  };
  const post = (url: string, fields: Record<string, string>, cookie: string) =>
    fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl }, body: new URLSearchParams(fields).toString() });
  const hosted = await session(paymentUrl);
  const started = await post(paymentUrl, { provider: 'MTN_MOMO_ZMB', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, csrf: hosted.csrf }, hosted.cookie);
  expect(started.status).toBe(303);
  const sandboxPage = started.headers.get('location')!;
  const payer = await session(sandboxPage);
  const approved = await post(sandboxPage, { decision: 'approve', csrf: payer.csrf }, payer.cookie);
  expect(approved.status).toBe(303);
}

/**
 * A POST with an Idempotency-Key, sent again while the answer is 503 (a service slow to answer
 * on a loaded machine): the same key never raises a second top-up.
 */
async function postRetrying(path: string, body: unknown): Promise<Awaited<ReturnType<typeof call>>> {
  const headers = { 'idempotency-key': `wallets-${Date.now()}-${Math.random()}` };
  for (let attempt = 1; ; attempt += 1) {
    const response = await call('POST', path, body, headers);
    if (response.status !== 503 || attempt === 4) return response;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

const wallet = async (id: string) => (await call('GET', `/v1/wallets/${id}`)).body;

async function advanceClock(clock: string, frozenTime: number): Promise<void> {
  expect((await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: frozenTime })).status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clock}`)).body.status === 'ready', 60_000, 'the test clock ready');
}

describe('prepaid wallets', () => {
  it('top up through the payer page, pay a renewal from the wallet, warn of a low balance once, and recharge by itself', async () => {
    const clock = (await call('POST', '/v1/test-clocks', { name: 'wallets', frozen_time: START })).body.id;
    const customer = (await call('POST', '/v1/customers', { name: 'Chanda Mulenga', email: 'chanda@example.com', test_clock: clock })).body;
    const plan = (await call('POST', '/v1/plans', { name: 'Water', pricing_model: 'flat_rate', amount_monthly: 1_000, currency: 'zmw' })).body;

    // One wallet per customer and currency; an unknown customer is a bad parameter.
    const created = await call('POST', '/v1/wallets', { customer: customer.id, currency: 'zmw' });
    expect(created).toMatchObject({ status: 201, body: { object: 'wallet', customer: customer.id, currency: 'zmw', balance: 0, auto_recharge: { enabled: false } } });
    const id = created.body.id as string;
    expect((await call('POST', '/v1/wallets', { customer: customer.id, currency: 'zmw' })).body.error).toMatchObject({ code: 'wallet_exists' });
    expect((await call('POST', '/v1/wallets', { customer: customer.id, currency: 'zmw' })).status).toBe(409);
    expect((await call('POST', '/v1/wallets', { customer: 'cus_nobody', currency: 'zmw' })).body.error).toMatchObject({ code: 'resource_missing', param: 'customer' });
    expect((await call('POST', `/v1/wallets/${id}/top-ups`, { amount: 0 })).status).toBe(400);
    // Read-only keys read; they do not write. Another app does not see the wallet.
    const readOnly = api(mesh, keys.testReadOnly);
    expect((await readOnly('GET', `/v1/wallets?customer=${customer.id}`)).body).toMatchObject({ object: 'list', total: 1, data: [{ id }] });
    expect((await readOnly('POST', `/v1/wallets/${id}/top-ups`, { amount: 100 })).status).toBe(403);
    expect((await api(mesh, keys.live)('GET', `/v1/wallets/${id}`)).status).toBe(404);

    // The subscription's first invoice comes while the wallet is empty: the wallet does not pay it.
    const subscription = (await call('POST', '/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' })).body;
    expect(subscription.status).toBeDefined();

    // A top-up raises an invoice that says so; paying it on the sandbox payer page credits the wallet.
    const topUp = await postRetrying(`/v1/wallets/${id}/top-ups`, { amount: 2_500 });
    expect(topUp).toMatchObject({ status: 201, body: { object: 'wallet_top_up', wallet: id, amount: 2_500, status: 'pending', automatic: false, payment_url: expect.stringMatching(/\/pay\//) } });
    const topUpInvoice = (await call('GET', `/v1/invoices/${topUp.body.invoice}`)).body;
    expect(topUpInvoice).toMatchObject({ status: 'open', billing_reason: 'top_up', amount_due: 2_500, currency: 'zmw', customer: customer.id });
    await payThroughPayerPage(topUp.body.payment_url);
    const [toppedUp] = await untilEvents('wallet.topped_up', 1);
    expect(toppedUp.data).toMatchObject({ object: { id, balance: 2_500 }, top_up: { id: topUp.body.id, status: 'credited' } });
    expect(await wallet(id)).toMatchObject({ balance: 2_500 });
    const created_ = (await untilEvents('invoice.created', 1)).find((event) => event.data.object.id === topUpInvoice.id)!;
    expect(created_.data).toMatchObject({ source: 'top_up', object: { billing_reason: 'top_up' } });
    const openInvoices = (await call('GET', `/v1/invoices?subscription=${subscription.id}`)).body.data;
    expect(openInvoices.map((invoice: { status: string }) => invoice.status)).toEqual(['open']);

    // Low balance under 2000; auto recharge of 3000 under 1000, paid with the sandbox's succeed number.
    const updated = await call('PATCH', `/v1/wallets/${id}`, {
      low_balance_threshold: 2_000,
      auto_recharge: { enabled: true, threshold: 1_000, amount: 3_000, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' },
    });
    expect(updated.body).toMatchObject({ low_balance_threshold: 2_000, auto_recharge: { enabled: true, threshold: 1_000, amount: 3_000, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' } });
    expect((await call('PATCH', `/v1/wallets/${id}`, { auto_recharge: { enabled: true, threshold: 1_000, amount: 3_000, phone_number: '0971000001', provider: 'MTN_MOMO_ZMB' } })).body.error)
      .toMatchObject({ code: 'parameter_invalid', param: 'auto_recharge.phone_number' });

    // February's renewal: the wallet pays it (2500 → 1500), crossing 2000: one wallet.low_balance.
    await advanceClock(clock, FEBRUARY + DAY);
    const renewal = await eventually(async () => {
      const invoices = (await call('GET', `/v1/invoices?subscription=${subscription.id}&status=paid`)).body.data;
      return invoices.length === 1 ? invoices[0] : undefined;
    }, 60_000, 'the renewal paid by the wallet');
    expect(renewal).toMatchObject({ billing_reason: 'subscription_cycle', amount_paid: 1_000, period: { start: FEBRUARY } });
    const [lowBalance] = await untilEvents('wallet.low_balance', 1);
    expect(lowBalance.data).toMatchObject({ object: { id, balance: 1_500 }, threshold: 2_000 });
    const ledger = (await call('GET', `/v1/wallets/${id}/transactions`)).body;
    expect(ledger).toMatchObject({ object: 'list', total: 2, data: [{ kind: 'invoice_payment', amount: -1_000, balance_after: 1_500, invoice: renewal.id }, { kind: 'top_up', amount: 2_500, balance_after: 2_500 }] });

    // March's renewal: 1500 → 500 crosses 1000: an automatic top-up of 3000 that settles by itself (no payer) → 3500.
    await advanceClock(clock, MARCH + DAY);
    const [autoRecharge] = await untilEvents('wallet.auto_recharge', 1);
    expect(autoRecharge.data.top_up).toMatchObject({ automatic: true, status: 'pending', payment: expect.stringMatching(/^pay_/) });
    await eventually(async () => (await wallet(id)).balance === 3_500, 60_000, 'the wallet recharged to 3500');
    const toppedUpTwice = await untilEvents('wallet.topped_up', 2);
    expect(toppedUpTwice.map((event) => event.data.top_up!.automatic).sort()).toEqual([false, true]);
    expect((await call('GET', `/v1/payments/${autoRecharge.data.top_up!.payment}`)).body).toMatchObject({ status: 'succeeded', phone_number: SANDBOX_MAGIC_NUMBERS.succeed });
    expect((await call('GET', `/v1/wallets/${id}/transactions?limit=2`)).body).toMatchObject({
      total: 4, has_more: true, data: [{ kind: 'top_up', amount: 3_000, balance_after: 3_500 }, { kind: 'invoice_payment', amount: -1_000, balance_after: 500 }],
    });

    // Settled: still one low-balance event (1500 → 500 was no new crossing of 2000) and one auto recharge.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await delivered('wallet.low_balance')).toHaveLength(1);
    expect(await delivered('wallet.auto_recharge')).toHaveLength(1);
    // The first invoice, raised before the wallet held anything, is still for the payer to pay.
    expect((await call('GET', `/v1/invoices?subscription=${subscription.id}&status=open`)).body.total).toBe(1);
  });
});

describe('live prepaid wallets at pawaPay', () => {
  /** Live events are read at their source, the service's outbox (a live endpoint must be https). */
  const outboxOf = (service: 'payments' | 'invoicing', key: string, type: string) =>
    queryDatabase<{ payload: { livemode: boolean; data: { top_up?: { id: string; payment: string; automatic: boolean } } } }>(mesh.databaseUrls[service],
      'SELECT payload FROM outbox_events WHERE key = $1 AND type = $2 ORDER BY seq', [key, type]);

  it('recharge by themselves with a pawaPay deposit pushed to the stored phone, credited once when callbacks race the status check; a refund of a wallet-paid invoice credits the wallet back; one-off invoices are paid from it, top-up invoices never', async () => {
    const live = api(mesh, keys.live);
    const customer = (await live('POST', '/v1/customers', { name: 'Bwalya Mwansa', email: `bwalya-${randomBytes(4).toString('hex')}@example.com` })).body;
    const id = (await live('POST', '/v1/wallets', { customer: customer.id, currency: 'zmw' })).body.id as string;
    expect((await live('PATCH', `/v1/wallets/${id}`, { auto_recharge: { enabled: true, threshold: 1_000, amount: 3_000, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' } })).status).toBe(200);

    // A first top-up of 1500, paid by the payer on pawaPay's page (the session, then its signed callback).
    const topUp = (await live('POST', `/v1/wallets/${id}/top-ups`, { amount: 1_500 })).body;
    const payment = await live('POST', '/v1/payments/initiate', { invoice_id: topUp.invoice, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' });
    expect([payment.status, payment.body.redirectUrl.startsWith(pawapay.baseUrl)]).toEqual([201, true]);
    const pageDeposit = new URL(payment.body.redirectUrl).pathname.split('/').pop()!;
    pawapay.finish(pageDeposit, 'COMPLETED');
    expect((await pawapay.sendCallback(`${mesh.baseUrl}/callbacks/pawapay`, pageDeposit)).status).toBe(200);
    await eventually(async () => (await live('GET', `/v1/wallets/${id}`)).body.balance === 1_500, 60_000, 'the live wallet topped up to 1500');

    // A subscription's first invoice of 1000: the wallet pays it (1500 → 500), crossing 1000: an automatic top-up of 3000.
    const plan = (await live('POST', '/v1/plans', { name: 'Water', pricing_model: 'flat_rate', amount_monthly: 1_000, currency: 'zmw' })).body;
    const subscription = (await live('POST', '/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' })).body;
    const paidByWallet = await eventually(async () => (await live('GET', `/v1/invoices?subscription=${subscription.id}&status=paid`)).body.data?.[0], 60_000, 'the first invoice paid by the wallet');
    const [started] = await eventually(async () => {
      const rows = await outboxOf('payments', id, 'wallet.auto_recharge');
      return rows.length > 0 ? rows : undefined;
    }, 60_000, 'wallet.auto_recharge');
    const pushPayment = started.payload.data.top_up!.payment;
    expect(started.payload).toMatchObject({ livemode: true, data: { top_up: { automatic: true, payment: expect.stringMatching(/^pay_/) } } });

    // No page: one pawaPay deposit pushed to the stored phone, with the documented body.
    const pushes = pawapay.requests.filter((request) => request.path === '/v2/deposits');
    expect(pushes).toHaveLength(1);
    const depositId = pushes[0].body!.depositId as string;
    expect(pushes[0].body).toMatchObject({ amount: '30.00', currency: 'ZMW', payer: { type: 'MMO', accountDetails: { phoneNumber: '260971234567', provider: 'MTN_MOMO_ZMB' } } });
    expect((await live('GET', `/v1/payments/${pushPayment}`)).body).toMatchObject({ status: 'pending', phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' });

    // The payer approves on the phone. Signed callbacks through the gateway and the janitor's status check reach the payment at once.
    pawapay.finish(depositId, 'COMPLETED');
    await queryDatabase(mesh.databaseUrls.payments, "UPDATE payments SET due_at = now() + interval '900 milliseconds', lease_until = NULL WHERE id = $1", [pushPayment]);
    const holder = await connectDatabase(mesh.databaseUrls.payments);
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [pushPayment]);
    const racing = Promise.all(Array.from({ length: 4 }, () => pawapay.sendCallback(`${mesh.baseUrl}/callbacks/pawapay`, depositId)));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await holder.query('COMMIT');
    await holder.end();
    expect((await racing).map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    await eventually(async () => (await live('GET', `/v1/wallets/${id}`)).body.balance === 3_500, 60_000, 'the live wallet recharged to 3500');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await live('GET', `/v1/wallets/${id}`)).body.balance).toBe(3_500);
    expect((await live('GET', `/v1/payments/${pushPayment}`)).body.status).toBe('succeeded');
    expect(await outboxOf('payments', pushPayment, 'recur.payments.v1.PaymentSucceeded')).toHaveLength(1);
    expect((await outboxOf('payments', id, 'wallet.topped_up')).map((row) => row.payload.data.top_up!.automatic)).toEqual([false, true]);
    expect(await outboxOf('payments', id, 'wallet.auto_recharge')).toHaveLength(1);
    expect(pawapay.requests.filter((request) => request.path === '/v2/deposits')).toHaveLength(1);

    // Refunding the invoice the wallet paid gives the 1000 back to the wallet at once: 201, a credit note, the invoice refunded.
    const refunded = await live('POST', '/v1/refunds', { invoice_id: paidByWallet.id, reason: 'requested_by_customer' });
    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({ object: 'credit_note', livemode: true, number: 'CN-000001', invoice: paidByWallet.id, amount: 1_000, currency: 'zmw', payment: expect.stringMatching(/^wtx_/) });
    expect((await live('GET', `/v1/invoices/${paidByWallet.id}`)).body.status).toBe('refunded');
    expect((await live('GET', `/v1/wallets/${id}`)).body.balance).toBe(4_500);
    expect((await live('GET', `/v1/wallets/${id}/transactions?limit=1`)).body).toMatchObject({ total: 4, data: [{ kind: 'refund', amount: 1_000, balance_after: 4_500, invoice: paidByWallet.id }] });
    expect((await live('POST', '/v1/refunds', { invoice_id: paidByWallet.id, reason: 'duplicate' })).body.error).toMatchObject({ code: 'invoice_refunded' });
    expect((await outboxOf('invoicing', paidByWallet.id, 'invoice.refunded')).map((row) => row.payload.livemode)).toEqual([true]);
    expect(pawapay.requests.filter((request) => request.path === '/v2/refunds')).toHaveLength(0);

    // The wallet pays a one-off invoice too (4500 → 4000); never a top-up's own invoice, which stays for the payer.
    const ownTopUp = (await live('POST', `/v1/wallets/${id}/top-ups`, { amount: 1_000 })).body;
    const oneOff = (await live('POST', '/v1/invoices', { customer: customer.id, status: 'open', amount: 500, currency: 'zmw', description: 'Meter repair' })).body;
    expect(oneOff).toMatchObject({ billing_reason: 'manual', status: 'open' });
    await eventually(async () => (await live('GET', `/v1/invoices/${oneOff.id}`)).body.status === 'paid', 60_000, 'the one-off invoice paid by the wallet');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await live('GET', `/v1/wallets/${id}/transactions?limit=1`)).body).toMatchObject({ total: 5, data: [{ kind: 'invoice_payment', amount: -500, balance_after: 4_000, invoice: oneOff.id }] });
    expect((await live('GET', `/v1/invoices/${ownTopUp.invoice}`)).body).toMatchObject({ billing_reason: 'top_up', status: 'open' });
  });
});
