import { constructEvent } from '@recur/webhooks';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { randomBytes } from 'node:crypto';
import { FakePawapay } from '../../../apps/payments/test/fake-pawapay';
import { api, eventually, type Keys, type Mesh, sleep, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Dunning and refunds, as a new user would meet them, over HTTP against every service as its
 * own process and a real Kafka: a declined sandbox payment starts reminders that a test clock
 * walks to past_due (e-mails at the mesh's SMTP catcher, signed invoice.dunning_retry webhooks
 * at a real receiver), paying brings the subscription back; a paid invoice gets no reminder;
 * refunds of unpaid, paid and refunded invoices; refunds racing each other.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
const DAY = 86_400;

const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

beforeAll(async () => {
  await pawapay.start();
  [mesh, receiver] = await Promise.all([
    startMesh({
      env: {
        'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
        // Live payments and refunds go to the local pawaPay stand-in; status checks soon after acceptance.
        payments: { PAWAPAY_BASE_URL: pawapay.baseUrl, PAWAPAY_API_TOKEN: pawapay.token, PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem, REFUND_RECOVERY_AFTER_MS: '60000' },
      },
    }),
    startWebhookReceiver(),
  ]);
  ({ keys } = await mesh.createAccount('Lusaka Fibre'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop(), pawapay.stop()]);
}, 60_000);

/** Approves (or declines) a sandbox payment on its payer page, as a browser form post does. */
async function decide(redirectUrl: string, decision: 'approve' | 'decline'): Promise<void> {
  const page = await fetch(redirectUrl);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  const answer = await fetch(redirectUrl, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ decision, csrf }).toString(),
  });
  expect(answer.status).toBe(303);
}

async function pay(invoiceId: string, phoneNumber: string) {
  const { status, body } = await call('POST', '/v1/payments/initiate', { invoice_id: invoiceId, phone_number: phoneNumber, provider: 'MTN_MOMO_ZMB' });
  expect(status).toBe(201);
  await decide(body.redirectUrl, 'approve');
  return body;
}

const invoiceStatus = async (id: string, status: string) => (await call('GET', `/v1/invoices/${id}`)).body.status === status;

/** A subscription of a new customer on a new test clock at `frozenTime`, and its first (open) invoice. */
async function subscriptionOnClock(frozenTime: number) {
  const clock = await call('POST', '/v1/test-clocks', { frozen_time: frozenTime });
  const email = `chanda-${randomBytes(4).toString('hex')}@example.com`;
  const customer = await call('POST', '/v1/customers', { name: 'Chanda Phiri', email, test_clock: clock.body.id });
  const plan = await call('POST', '/v1/plans', { name: 'Home 50', pricing_model: 'flat_rate', amount_monthly: 35_000, currency: 'zmw' });
  const subscription = await call('POST', '/v1/subscriptions', { customer: customer.body.id, plan: plan.body.id, billing_interval: 'monthly' });
  expect(subscription.status).toBe(201);
  const invoice = await eventually(async () => (await call('GET', `/v1/invoices?subscription=${subscription.body.id}`)).body.data?.[0], 30_000, 'the first invoice');
  return { clock: clock.body, email, subscription: subscription.body, invoice };
}

async function advance(clockId: string, frozenTime: number) {
  expect((await call('POST', `/v1/test-clocks/${clockId}/advance`, { frozen_time: frozenTime })).status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clockId}`)).body.status === 'ready', 30_000, 'the clock ready');
}

const reminderSubjects = (email: string) =>
  mesh.mail.messages().filter((mail) => mail.envelope.to.includes(email) && mail.parsed.subject?.startsWith('Reminder')).map((mail) => mail.parsed.subject);

async function webhooks(path: string, secret: string, count: number, what: string) {
  const got = await eventually(async () => {
    const received = await receiver.received(path);
    return received.length >= count ? received : undefined;
  }, 60_000, what);
  return got.map((delivery) => constructEvent(delivery.body, delivery.headers, secret) as { type: string; data: Record<string, any> });
}

describe('dunning', () => {
  it('a declined payment starts reminders the test clock walks to past_due; paying brings the subscription back', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/dunning`, events: ['invoice.dunning_retry', 'subscription.past_due', 'subscription.activated'] });
    const start = Math.floor(Date.UTC(2030, 2, 1, 9) / 1000);
    const { clock, email, subscription, invoice } = await subscriptionOnClock(start);
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.fail);
    await eventually(() => invoiceStatus(invoice.id, 'failed'), 30_000, 'the invoice failed');

    // Reminders at 3, 7 and 14 days: four days on, the first has gone out, and only it.
    await advance(clock.id, start + 4 * DAY);
    await eventually(async () => reminderSubjects(email).length === 1, 30_000, 'the first reminder mail');
    const [first] = mesh.mail.messages().filter((mail) => mail.envelope.to.includes(email) && mail.parsed.subject?.startsWith('Reminder'));
    expect(first.parsed.subject).toBe(`Reminder 1: invoice ${invoice.number} is due`);
    expect(first.parsed.text).toContain(invoice.payment_url);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status).toBe('active');

    await advance(clock.id, start + 15 * DAY);
    await eventually(async () => (await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status === 'past_due', 30_000, 'the subscription past_due');
    await eventually(async () => reminderSubjects(email).length === 3, 30_000, 'three reminder mails');
    expect(reminderSubjects(email).sort()).toEqual([1, 2, 3].map((n) => `Reminder ${n}: invoice ${invoice.number} is due`));

    const announced = await webhooks('/dunning', endpoint.body.secret, 4, 'three dunning_retry and one past_due webhooks');
    expect(announced.filter((event) => event.type === 'invoice.dunning_retry').map((event) => [event.data.reminder, event.data.reminder_count, event.data.final, event.data.object.id]).sort())
      .toEqual([[1, 3, false, invoice.id], [2, 3, false, invoice.id], [3, 3, true, invoice.id]]);
    expect(announced.find((event) => event.type === 'subscription.past_due')!.data.object).toMatchObject({ id: subscription.id, status: 'past_due' });

    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await eventually(async () => (await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status === 'active', 30_000, 'the subscription active again');
    const all = await webhooks('/dunning', endpoint.body.secret, 5, 'the subscription.activated webhook');
    expect(all.filter((event) => event.type === 'subscription.activated').map((event) => event.data.object.id)).toEqual([subscription.id]);
    // Exactly one mail and one event per reminder, walking the clock on changes nothing more.
    await advance(clock.id, start + 20 * DAY);
    expect(reminderSubjects(email)).toHaveLength(3);
    expect((await receiver.received('/dunning')).length).toBe(5);
  });

  it('a failed invoice paid before its first reminder gets none', async () => {
    const start = Math.floor(Date.UTC(2030, 5, 1, 9) / 1000);
    const { clock, email, subscription, invoice } = await subscriptionOnClock(start);
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.fail);
    await eventually(() => invoiceStatus(invoice.id, 'failed'), 30_000, 'the invoice failed');
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await eventually(() => invoiceStatus(invoice.id, 'paid'), 30_000, 'the invoice paid');
    await advance(clock.id, start + 20 * DAY);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(reminderSubjects(email)).toEqual([]);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status).toBe('active');
  });
});

describe('live refunds at pawaPay', () => {
  it('POST /v1/refunds answers 202 with the processing refund; pawaPay\'s signed refund callback at /callbacks/pawapay/refunds completes it into the credit note, once', async () => {
    const live = api(mesh, keys.live);
    const customer = (await live('POST', '/v1/customers', { name: 'Bwalya Mwansa', email: `bwalya-${randomBytes(4).toString('hex')}@example.com` })).body;
    const invoice = (await live('POST', '/v1/invoices', { customer: customer.id, status: 'open', amount: 12_000, currency: 'zmw', description: 'Fibre, October' })).body;
    const payment = await live('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' });
    expect([payment.status, payment.body.redirectUrl.startsWith(pawapay.baseUrl)]).toEqual([201, true]);
    const depositId = new URL(payment.body.redirectUrl).pathname.split('/').pop()!;
    pawapay.finish(depositId, 'COMPLETED');
    expect((await pawapay.sendCallback(`${mesh.baseUrl}/callbacks/pawapay`, depositId)).status).toBe(200);
    await eventually(async () => (await live('GET', `/v1/invoices/${invoice.id}`)).body.status === 'paid', 30_000, 'the live invoice paid');

    const accepted = await live('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer' });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({
      id: expect.stringMatching(/^cn_/), object: 'refund', livemode: true, status: 'processing', invoice: invoice.id, payment: payment.body.id,
      amount: 12_000, currency: 'zmw', reason: 'requested_by_customer', failure_code: null, failure_message: null, created: expect.any(Number),
    });
    // Until it has a credit note, the refund is what its id retrieves.
    const retrieved = await live('GET', `/v1/refunds/${accepted.body.id}`);
    expect([retrieved.status, retrieved.body]).toEqual([200, accepted.body]);
    expect((await live('GET', `/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
    expect((await live('GET', `/v1/refunds?invoice=${invoice.id}`)).body.total).toBe(0);
    const refundId = [...pawapay.refunds.values()].find((refund) => refund.depositId === depositId)!.refundId;
    pawapay.finishRefund(refundId, 'COMPLETED');
    const url = `${mesh.baseUrl}/callbacks/pawapay/refunds`;
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refundId, status: 'COMPLETED' }) });
    expect(unsigned.status).toBe(401);
    expect(await pawapay.sendRefundCallback(url, refundId)).toEqual({ status: 200, body: { received: true, outcome: 'settled' } });
    expect(await pawapay.sendRefundCallback(url, refundId)).toEqual({ status: 200, body: { received: true, outcome: 'already_settled' } });
    await eventually(async () => (await live('GET', `/v1/invoices/${invoice.id}`)).body.status === 'refunded', 30_000, 'the live invoice refunded');
    expect((await live('GET', `/v1/refunds/${accepted.body.id}`)).body).toMatchObject({ object: 'credit_note', id: accepted.body.id, number: 'CN-000001', livemode: true, invoice: invoice.id });
    // One invoice.refunded (a live endpoint must be https, so the event is read at its source: invoicing's outbox).
    const refunded = await queryDatabase<{ payload: { livemode: boolean; data: { credit_note: { id: string } } } }>(mesh.databaseUrls.invoicing,
      "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'invoice.refunded'", [invoice.id]);
    expect(refunded.map((row) => [row.payload.livemode, row.payload.data.credit_note.id])).toEqual([[true, accepted.body.id]]);
  });
});

describe('a live cancellation that refunds the unused time', () => {
  it('asks pawaPay to refund the paid period\'s unused time through its deposit; when pawaPay fails the refund, the credit comes back to the balance, once', async () => {
    const live = api(mesh, keys.live);
    const customer = (await live('POST', '/v1/customers', { name: 'Mulenga Banda', email: `mulenga-${randomBytes(4).toString('hex')}@example.com` })).body;
    const plan = (await live('POST', '/v1/plans', { name: 'Fibre 30', pricing_model: 'flat_rate', amount_monthly: 31_000, currency: 'zmw' })).body;
    const subscription = (await live('POST', '/v1/subscriptions', { customer: customer.id, plan: plan.id, billing_interval: 'monthly' })).body;
    expect(subscription.status).toBe('active');
    const invoiceOf = (billingReason: string) => eventually(async () =>
      (await live('GET', `/v1/invoices?subscription=${subscription.id}&limit=10`)).body.data.find((invoice: { billing_reason: string }) => invoice.billing_reason === billingReason), 30_000, `the ${billingReason} invoice`);
    const first = await invoiceOf('subscription_create');
    const payment = await live('POST', '/v1/payments/initiate', { invoice_id: first.id, phone_number: '+260971234567', provider: 'MTN_MOMO_ZMB' });
    const depositId = new URL(payment.body.redirectUrl).pathname.split('/').pop()!;
    pawapay.finish(depositId, 'COMPLETED');
    expect((await pawapay.sendCallback(`${mesh.baseUrl}/callbacks/pawapay`, depositId)).status).toBe(200);
    await eventually(async () => (await live('GET', `/v1/invoices/${first.id}`)).body.status === 'paid', 30_000, 'the period invoice paid');

    expect((await live('POST', `/v1/subscriptions/${subscription.id}/cancel`, { prorate: true, refund: true })).body.status).toBe('cancelled');
    const final = await invoiceOf('subscription_final');
    const credit = -final.total;
    expect(credit).toBeGreaterThan(30_000);
    const ledger = async () => (await live('GET', `/v1/customers/${customer.id}/balance-transactions`)).body.data.map((entry: any) => [entry.type, entry.amount, entry.ending_balance]);
    // The refund at pawaPay is of the credit, through the period invoice's deposit, in major units.
    const refund = await eventually(async () => [...pawapay.refunds.values()].find((entry) => entry.depositId === depositId), 30_000, 'the refund asked of pawaPay');
    expect([refund.amount, refund.currency]).toEqual([(credit / 100).toFixed(2), 'ZMW']);
    expect(await ledger()).toEqual([['refund', credit, 0], ['applied_to_invoice', -credit, -credit]]);

    pawapay.finishRefund(refund.refundId, 'FAILED');
    const url = `${mesh.baseUrl}/callbacks/pawapay/refunds`;
    expect(await pawapay.sendRefundCallback(url, refund.refundId)).toEqual({ status: 200, body: { received: true, outcome: 'settled' } });
    await eventually(async () => (await ledger()).length === 3 || undefined, 30_000, 'the credit back in the balance');
    expect((await ledger())[0]).toEqual(['refund_reversal', -credit, -credit]);
    expect(await pawapay.sendRefundCallback(url, refund.refundId)).toEqual({ status: 200, body: { received: true, outcome: 'already_settled' } });
    await sleep(1_000);
    expect(await ledger()).toHaveLength(3);
    expect((await live('GET', `/v1/customers/${customer.id}`)).body.balance).toBe(-credit);
  });
});

describe('the app\'s dunning schedule and one-off invoices', () => {
  it('PUT /v1/dunning-schedule refuses a bad schedule (400, nothing stored) and sets a good one, which chases a declined one-off invoice on its customer\'s test clock', async () => {
    const { keys: own } = await mesh.createAccount('Kitwe Solar');
    const as = api(mesh, own.test);
    const endpoint = await as('POST', '/v1/webhooks', { url: `${receiver.url}/one-off`, events: ['invoice.dunning_retry', 'subscription.past_due'] });
    expect((await as('GET', '/v1/dunning-schedule')).body).toEqual({
      object: 'dunning_schedule', livemode: false, days_after_failure: [3, 7, 14], default: true, updated: null,
      payment_retries: { days_after_failure: [1, 3, 5], hour: 9, time_zone: 'UTC', default: true },
    });
    for (const bad of [[7, 3], [2, 2], [91], [], [1.5], ['3'], Array.from({ length: 11 }, (_, index) => index + 1)]) {
      const refused = await as('PUT', '/v1/dunning-schedule', { days_after_failure: bad });
      expect([refused.status, refused.body.error.param]).toEqual([400, 'days_after_failure']);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
    }
    expect((await as('PUT', '/v1/dunning-schedule', {})).status).toBe(400);
    expect((await as('GET', '/v1/dunning-schedule')).body).toMatchObject({ days_after_failure: [3, 7, 14], default: true });
    const set = await as('PUT', '/v1/dunning-schedule', { days_after_failure: [1, 2] });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ object: 'dunning_schedule', livemode: false, days_after_failure: [1, 2], default: false, updated: expect.any(Number) });
    expect((await as('GET', '/v1/dunning-schedule')).body).toEqual(set.body);
    expect((await api(mesh, own.live)('GET', '/v1/dunning-schedule')).body).toMatchObject({ livemode: true, default: true });

    // A one-off invoice (no subscription) of a customer on a test clock, declined: reminders on days 1 and 2 of the clock.
    const start = Math.floor(Date.UTC(2030, 8, 1, 9) / 1000);
    const clock = (await as('POST', '/v1/test-clocks', { frozen_time: start })).body;
    const email = `mutale-${randomBytes(4).toString('hex')}@example.com`;
    const customer = (await as('POST', '/v1/customers', { name: 'Mutale Zulu', email, test_clock: clock.id })).body;
    const invoice = (await as('POST', '/v1/invoices', { customer: customer.id, status: 'open', amount: 25_000, currency: 'zmw', description: 'Panel installation' })).body;
    const { status, body: payment } = await as('POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.fail, provider: 'MTN_MOMO_ZMB' });
    expect(status).toBe(201);
    await decide(payment.redirectUrl, 'approve');
    await eventually(async () => (await as('GET', `/v1/invoices/${invoice.id}`)).body.status === 'failed', 30_000, 'the one-off invoice failed');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(reminderSubjects(email)).toEqual([]); // the customer's clock has reached no reminder yet
    expect((await as('POST', `/v1/test-clocks/${clock.id}/advance`, { frozen_time: start + 3 * DAY })).status).toBe(200);
    await eventually(async () => reminderSubjects(email).length === 2, 30_000, 'two reminder mails');
    const announced = await webhooks('/one-off', endpoint.body.secret, 2, 'two dunning_retry webhooks');
    expect(announced.map((event) => [event.type, event.data.reminder, event.data.reminder_count, event.data.final]).sort()).toEqual([['invoice.dunning_retry', 1, 2, false], ['invoice.dunning_retry', 2, 2, true]]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await receiver.received('/one-off')).length).toBe(2); // no subscription.past_due: there is no subscription
    expect((await as('GET', `/v1/invoices/${invoice.id}`)).body.status).toBe('failed');
  });
});

describe('refunds', () => {
  async function paidInvoice(amount = 9_900) {
    const customer = await call('POST', '/v1/customers', { name: 'Mwila Banda', email: 'mwila@example.com' });
    const { body: invoice } = await call('POST', '/v1/invoices', { customer: customer.body.id, amount, currency: 'zmw', description: 'Fibre, December', status: 'open' });
    return invoice;
  }

  it('refunds a paid invoice into a numbered credit note (invoice.refunded); an unpaid or already refunded one answers 409', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/refunded`, events: ['invoice.refunded'] });
    const invoice = await paidInvoice();
    const unpaid = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer' });
    expect([unpaid.status, unpaid.body.error.code]).toEqual([409, 'invoice_not_paid']);
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await eventually(() => invoiceStatus(invoice.id, 'paid'), 30_000, 'the invoice paid');

    const refunded = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer' });
    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({ object: 'credit_note', id: expect.stringMatching(/^cn_/), number: expect.stringMatching(/^CN-\d{6}$/), invoice: invoice.id, amount: 9_900, currency: 'zmw', reason: 'requested_by_customer', livemode: false });
    expect((await call('GET', `/v1/invoices/${invoice.id}`)).body.status).toBe('refunded');
    const again = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'duplicate' });
    expect([again.status, again.body.error.code]).toEqual([409, 'invoice_refunded']);
    const badReason = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'changed_my_mind' });
    expect([badReason.status, badReason.body.error.param]).toEqual([400, 'reason']);

    expect((await call('GET', `/v1/refunds?invoice=${invoice.id}`)).body).toMatchObject({ object: 'list', total: 1, data: [{ id: refunded.body.id }] });
    expect((await call('GET', `/v1/refunds/${refunded.body.id}`)).body).toEqual(refunded.body);
    const pdf = await fetch(`${mesh.baseUrl}/v1/refunds/${refunded.body.id}/pdf`, { headers: { 'x-api-key': keys.test } });
    expect([pdf.status, pdf.headers.get('content-type'), pdf.headers.get('content-disposition')]).toEqual([200, 'application/pdf', `attachment; filename="${refunded.body.number}.pdf"`]);
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');

    const [event] = await webhooks('/refunded', endpoint.body.secret, 1, 'the invoice.refunded webhook');
    expect(event).toMatchObject({ type: 'invoice.refunded', data: { object: { id: invoice.id, status: 'refunded' }, credit_note: { id: refunded.body.id } } });
  });

  it('of refunds of one invoice racing each other, exactly one succeeds', async () => {
    const invoice = await paidInvoice(4_000);
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await eventually(() => invoiceStatus(invoice.id, 'paid'), 30_000, 'the invoice paid');
    const answers = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'duplicate' })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(answers.filter((answer) => answer.status === 409).every((answer) => answer.body.error.code === 'invoice_refunded')).toBe(true);
    expect((await call('GET', `/v1/refunds?invoice=${invoice.id}`)).body.total).toBe(1);
  });

  it('partial refunds: each a credit note (credit_note.created), the invoice paid with amount_refunded until the last one refunds it (invoice.refunded); never more than was paid, under racing requests', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/credit-notes`, events: ['credit_note.created', 'invoice.refunded'] });
    const invoice = await paidInvoice(10_000);
    await pay(invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await eventually(() => invoiceStatus(invoice.id, 'paid'), 30_000, 'the invoice paid');

    const first = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer', amount: 2_500 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ object: 'credit_note', amount: 2_500, invoice: invoice.id });
    expect((await call('GET', `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: 10_000, amount_refunded: 2_500 });
    for (const [amount, param] of [[0, 'amount'], [-5, 'amount'], [1.5, 'amount'], ['100', 'amount'], [null, 'amount']] as const) {
      const refused = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer', amount });
      expect([refused.status, refused.body.error.param]).toEqual([400, param]);
    }
    const tooLarge = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer', amount: 7_501 });
    expect([tooLarge.status, tooLarge.body.error.code, tooLarge.body.error.param]).toEqual([400, 'amount_too_large', 'amount']);

    // Six requests of 2 000 race for the 7 500 left: three fit; the others are refused and move nothing.
    const racing = await Promise.all(Array.from({ length: 6 }, () => call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'duplicate', amount: 2_000 })));
    expect(racing.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 400, 400, 400]);
    expect(racing.filter((answer) => answer.status === 400).every((answer) => answer.body.error.code === 'amount_too_large')).toBe(true);
    const rest = await call('POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer' });
    expect([rest.status, rest.body.amount]).toEqual([201, 1_500]);
    expect((await call('GET', `/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'refunded', amount_refunded: 10_000 });
    const notes = await eventually(async () => {
      const page = (await call('GET', `/v1/refunds?invoice=${invoice.id}`)).body.data;
      return page.length === 5 ? page : undefined;
    }, 10_000, 'five credit notes');
    expect(notes.reduce((total: number, note: { amount: number }) => total + note.amount, 0)).toBe(10_000);

    const events = await webhooks('/credit-notes', endpoint.body.secret, 6, 'five credit_note.created and one invoice.refunded');
    expect(events.filter((event) => event.type === 'credit_note.created').map((event) => event.data.object.amount).sort()).toEqual([1_500, 2_000, 2_000, 2_000, 2_500]);
    expect(events.filter((event) => event.type === 'invoice.refunded')).toEqual([expect.objectContaining({ data: expect.objectContaining({ credit_note: expect.objectContaining({ id: rest.body.id }) }) })]);
  });
});
