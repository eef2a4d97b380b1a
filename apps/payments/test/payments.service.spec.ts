import * as grpc from '@grpc/grpc-js';
import type { JsonObject } from '@bufbuild/protobuf';
import { generateKeyPairSync } from 'node:crypto';
import { invoicingV1, paymentsV1, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { connectDatabase, eventually, grpcFailure, queryDatabase, NO_INVOICE_MAIL, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { randomBytes } from 'node:crypto';
import { providerPaymentIdFor } from '../src/payments/payment';
import { FakePawapay } from './fake-pawapay';

/**
 * The payments service as its own process on a real PostgreSQL database, with the real
 * invoicing and subscription services beside it, and a local stand-in for pawaPay's Merchant
 * API (FakePawapay) as the outside world of live payments. Driven through gRPC only.
 */
jest.setTimeout(60_000);

const PAGES = 'https://pages.recur.test';
const CALLBACK_URL = 'https://recur.example.test/callbacks/pawapay';
let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let payments: ServiceUnderTest<typeof paymentsV1.PaymentsService>;
let client: ServiceClient<typeof paymentsV1.PaymentsService>;
const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

const newTenant = (livemode = false) => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode });
type Tenant = ReturnType<typeof newTenant>;
const ZAMBIAN = '+260971234567';

beforeAll(async () => {
  await pawapay.start();
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, ...NO_INVOICE_MAIL });
  payments = await startServiceUnderTest('payments', paymentsV1.PaymentsService, {
    INVOICING_GRPC_ADDR: invoicing.grpcAddress,
    PAYMENT_PAGES_URL: PAGES,
    PAWAPAY_BASE_URL: pawapay.baseUrl,
    PAWAPAY_API_TOKEN: pawapay.token,
    PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem,
    // The janitor's first status check comes soon, so tests see it; later ones back off from it.
    PAYMENT_STATUS_CHECK_AFTER_MS: '400',
  });
  client = payments.client;
}, 120_000);

afterAll(async () => {
  await payments?.stop();
  await invoicing?.stop();
  await subscription?.stop();
  await pawapay.stop();
});

/** An open invoice of `amount` ngwee (zmw) for a new customer of the tenant. */
async function openInvoice(tenant: Tenant, amount = 12_345, status = 'open') {
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Mwila Banda', email: 'mwila@example.com' });
  const { invoice } = await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: BigInt(amount), currency: 'zmw', description: 'Internet, December', status });
  return invoice!;
}

const initiate = (tenant: Tenant, invoiceId: string, phoneNumber = ZAMBIAN, provider = 'MTN_MOMO_ZMB', requestId = `req_${randomBytes(6).toString('hex')}`) =>
  client.initiatePayment({ tenant, invoiceId, phoneNumber, provider, requestId });

const invoiceOf = async (tenant: Tenant, id: string) => (await invoicing.client.getInvoice({ tenant, id })).invoice!;
const token = (redirectUrl: string) => redirectUrl.slice(redirectUrl.lastIndexOf('/') + 1);
const requestsTo = (path: string) => pawapay.requests.filter((request) => request.path.startsWith(path));

interface OutboxRow extends Record<string, unknown> {
  type: string;
  payload: JsonObject;
}
const outbox = (databaseUrl: string, key: string) => queryDatabase<OutboxRow>(databaseUrl, 'SELECT type, payload FROM outbox_events WHERE key = $1 ORDER BY seq', [key]);
const types = async (databaseUrl: string, key: string) => (await outbox(databaseUrl, key)).map((row) => row.type);

describe('initiation', () => {
  it('starts a sandbox payment on Recur’s payer page, with an unguessable token, and never calls pawaPay', async () => {
    const tenant = newTenant(false);
    const invoice = await openInvoice(tenant);
    const before = pawapay.requests.length;
    const { payment } = await initiate(tenant, invoice.id);
    expect(payment).toMatchObject({ status: 'pending', invoiceId: invoice.id, invoiceNumber: invoice.number, phoneNumber: ZAMBIAN, provider: 'MTN_MOMO_ZMB', livemode: false });
    expect(payment!.id).toMatch(/^pay_[A-Za-z0-9]{24}$/);
    expect(payment!.amount).toEqual({ $typeName: 'recur.common.v1.Money', amountMinor: 12_345n, currency: 'zmw' });
    expect(payment!.redirectUrl).toMatch(new RegExp(`^${PAGES}/sandbox/pay/[A-Za-z0-9_-]{43}$`));
    expect(pawapay.requests.length).toBe(before);
    const page = await client.getPayerPage({ token: token(payment!.redirectUrl) });
    expect(page).toMatchObject({ sandbox: true, expectedOutcome: 'succeed', payment: { id: payment!.id }, tenant: { accountId: tenant.accountId, livemode: false } });
    expect((await grpcFailure(client.getPayerPage({ token: 'A'.repeat(43) }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('starts a live payment at pawaPay (payment page, the documented request) and keeps pawaPay’s redirectUrl', async () => {
    const tenant = newTenant(true);
    const invoice = await openInvoice(tenant, 12_345);
    const { payment } = await initiate(tenant, invoice.id);
    const [request] = requestsTo('/v2/paymentpage').filter((r) => (r.body as { metadata: { paymentId?: string }[] }).metadata.some((m) => m.paymentId === payment!.id));
    expect(request).toBeDefined();
    expect(request.authorization).toBe(`Bearer ${pawapay.token}`);
    expect(request.body).toMatchObject({
      amountDetails: { amount: '123.45', currency: 'ZMW' },
      phoneNumber: '260971234567',
      country: 'ZMB',
      returnUrl: expect.stringMatching(new RegExp(`^${PAGES}/pay/return/[A-Za-z0-9_-]{43}$`)),
    });
    expect(payment!.redirectUrl).toBe(`${pawapay.baseUrl}/pay/${(request.body as { depositId: string }).depositId}`);
    expect(payment).toMatchObject({ status: 'pending', livemode: true });
    // A live payment's page token never opens the sandbox's Approve/Decline.
    const livePageToken = token((request.body as { returnUrl: string }).returnUrl);
    expect((await grpcFailure(client.decideSandboxPayment({ token: livePageToken, decision: 'approve' }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('answers the pending payment to a repeat, even to many at once: one charge per invoice', async () => {
    for (const livemode of [false, true]) {
      const tenant = newTenant(livemode);
      const invoice = await openInvoice(tenant);
      const before = requestsTo('/v2/paymentpage').length;
      const answers = await Promise.all(Array.from({ length: 8 }, () => initiate(tenant, invoice.id)));
      expect(new Set(answers.map(({ payment }) => payment!.id)).size).toBe(1);
      const rows = await queryDatabase(payments.databaseUrl, 'SELECT id FROM payments WHERE invoice_id = $1', [invoice.id]);
      expect(rows).toHaveLength(1);
      expect(requestsTo('/v2/paymentpage').length - before).toBe(livemode ? 1 : 0);
    }
  });

  it('refuses invoices that cannot be paid, each with its own code', async () => {
    const tenant = newTenant();
    const draft = await openInvoice(tenant, 500, 'draft');
    expect(await grpcFailure(initiate(tenant, draft.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_draft' });
    const voided = await openInvoice(tenant);
    await invoicing.client.voidInvoice({ tenant, id: voided.id, requestId: `void_${voided.id}` });
    expect(await grpcFailure(initiate(tenant, voided.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_void' });
    const paid = await openInvoice(tenant);
    const { payment } = await initiate(tenant, paid.id);
    await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' });
    await eventually(async () => (await invoiceOf(tenant, paid.id)).status === 'paid', 10_000, 'the invoice paid');
    expect(await grpcFailure(initiate(tenant, paid.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_paid' });
    // Another app's invoice does not exist here.
    expect(await grpcFailure(initiate(newTenant(), paid.id))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'invoice_id' });
  });

  it('validates the phone number with libphonenumber and the provider against the documented list', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant);
    expect(await grpcFailure(initiate(tenant, invoice.id, '0971234567'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'phone_number' });
    expect(await grpcFailure(initiate(tenant, invoice.id, '+26097123'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'phone_number' });
    expect(await grpcFailure(initiate(tenant, invoice.id, '+254712345678'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'phone_number_provider_mismatch', param: 'phone_number' });
    expect(await grpcFailure(initiate(tenant, invoice.id, ZAMBIAN, 'PAYPAL'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'provider' });
    // A Kenyan number with a Kenyan provider passes the number's checks; M-Pesa Kenya then refuses the invoice's ZMW.
    expect(await grpcFailure(initiate(tenant, invoice.id, '+254712345678', 'MPESA_KEN'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'currency_not_supported_by_provider', param: 'provider' });
  });

  it('records a payment pawaPay rejects at initiation as failed, and the invoice fails', async () => {
    const tenant = newTenant(true);
    const invoice = await openInvoice(tenant, 99_900);
    pawapay.rejectAmounts.add('999.00');
    const { payment } = await initiate(tenant, invoice.id);
    expect(payment).toMatchObject({ status: 'failed', failureCode: 'amount_out_of_bounds', redirectUrl: '' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'failed', 10_000, 'the invoice failed');
  });
});

describe('provider rules before money moves', () => {
  /** An open invoice of `amount` minor units of `currency` for a new customer. */
  async function invoiceIn(tenant: Tenant, amount: number, currency: string) {
    const { customer } = await subscription.client.createCustomer({ tenant, name: 'Chanda Mulenga', email: 'chanda@example.com' });
    return (await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: BigInt(amount), currency, description: 'Solar lease', status: 'open' })).invoice!;
  }
  const sentToPawapay = () => pawapay.requests.filter((request) => request.method === 'POST' && ['/v2/paymentpage', '/v2/deposits'].includes(request.path)).length;

  it.each([
    ['a USD invoice to MTN MoMo Zambia', 2_500, 'usd', 'MTN_MOMO_ZMB', 'currency_not_supported_by_provider', 'provider'],
    ['0.50 ZMW, below MTN MoMo Zambia\'s minimum', 50, 'zmw', 'MTN_MOMO_ZMB', 'amount_below_provider_minimum', 'invoice_id'],
    ['60 000 ZMW, above its maximum', 6_000_000, 'zmw', 'MTN_MOMO_ZMB', 'amount_above_provider_maximum', 'invoice_id'],
  ])('refuses %s with a 400 before pawaPay is asked, and records no payment', async (_case, amount, currency, provider, errorCode, param) => {
    const tenant = newTenant(true);
    const invoice = await invoiceIn(tenant, amount, currency);
    const before = sentToPawapay();
    expect(await grpcFailure(initiate(tenant, invoice.id, '+260961234567', provider))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode, param });
    expect(sentToPawapay()).toBe(before);
    expect((await client.listPayments({ tenant, page: { limit: 10, offset: 0 }, invoiceId: invoice.id })).payments).toEqual([]);
    expect((await invoiceOf(tenant, invoice.id)).status).toBe('open');
  });

  it('refuses cents a whole-amount provider cannot carry (a KES invoice of 100.50 to M-Pesa Kenya)', async () => {
    const tenant = newTenant(false);
    const invoice = await invoiceIn(tenant, 10_050, 'kes');
    expect(await grpcFailure(initiate(tenant, invoice.id, '+254712345678', 'MPESA_KEN'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_precision_not_supported', param: 'invoice_id' });
  });

  it('predicts the provider from the number when none is named: by prefix in the sandbox, by pawaPay\'s predict-provider live', async () => {
    const sandbox = newTenant(false);
    const sandboxInvoice = await openInvoice(sandbox);
    expect((await initiate(sandbox, sandboxInvoice.id, '+260961234567', '')).payment).toMatchObject({ provider: 'MTN_MOMO_ZMB', status: 'pending' });
    const live = newTenant(true);
    const liveInvoice = await openInvoice(live);
    pawapay.predictions.set('260951234567', 'AIRTEL_OAPI_ZMB'); // a Zamtel prefix, ported: only pawaPay knows
    expect((await initiate(live, liveInvoice.id, '+260951234567', '')).payment).toMatchObject({ provider: 'AIRTEL_OAPI_ZMB', status: 'pending' });
    expect(pawapay.requests.some((request) => request.path === '/v2/predict-provider' && (request.body as { phoneNumber?: string }).phoneNumber === '260951234567')).toBe(true);
    const nowhere = await openInvoice(sandbox);
    expect(await grpcFailure(initiate(sandbox, nowhere.id, '+14155550100', ''))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'provider_not_predictable', param: 'provider' });
  });
});

describe('one invoice, one collection', () => {
  it('a credit note issued between the invoice\'s read and its lock: the payment asks what the invoice owes after the credit', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant, 12_345);
    // Hold the invoice's collection lock (payments' advisory lock, as a CreditInvoice in flight holds
    // it): the initiation reads the invoice (12 345 due), then waits on the lock.
    const holder = await connectDatabase(payments.databaseUrl);
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(['payment-invoice', tenant.accountId, tenant.livemode, invoice.id])]);
    const waitingOnLock = async () =>
      Number((await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
    try {
      const started = initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
      await eventually(async () => (await waitingOnLock()) === 1 || undefined, 10_000, 'the initiation waiting on the invoice\'s lock');
      // What the lock's holder does: invoicing issues the credit note.
      const { creditNote } = await invoicing.client.issueCreditNote({ tenant, id: invoice.id, amount: 2_345n, reason: 'order_change', memo: '', requestId: `req_${randomBytes(6).toString('hex')}` });
      expect(creditNote!.amount!.amountMinor).toBe(2_345n);
      await holder.query('COMMIT');
      const { payment } = await started;
      expect(payment!.amount!.amountMinor).toBe(10_000n);
      expect((await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' })).payment!.status).toBe('succeeded');
      await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 20_000, 'the invoice paid by the payment of what it owed after the credit');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });

  it('refuses a second payment while the first one’s success is still on its way to invoicing (409 invoice_paid)', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant, 700);
    // Invoicing cannot record the success while its invoice row is held: the invoice stays open meanwhile.
    const held = await connectDatabase(invoicing.databaseUrl);
    await held.query('BEGIN');
    await held.query('SELECT 1 FROM invoices WHERE id = $1 FOR UPDATE', [invoice.id]);
    try {
      const { payment } = await initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
      expect((await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' })).payment!.status).toBe('succeeded');
      expect((await invoiceOf(tenant, invoice.id)).status).toBe('open');
      expect(await grpcFailure(initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_paid' });
    } finally {
      await held.query('ROLLBACK');
      await held.end();
    }
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 20_000, 'the invoice paid');
    expect((await client.listPayments({ tenant, invoiceId: invoice.id, page: { limit: 10, offset: 0 } })).payments.map((payment) => payment.status)).toEqual(['succeeded']);
  });

  it('Approve on a voided invoice’s payer page cancels the payment and refuses (invoice_void): nothing is collected', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant, 800);
    const { payment } = await initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    await invoicing.client.voidInvoice({ tenant, id: invoice.id, requestId: `void_${invoice.id}` });
    expect(await grpcFailure(client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_void' });
    expect((await client.getPayment({ tenant, id: payment!.id })).payment).toMatchObject({ status: 'canceled', failureCode: 'invoice_void' });
    // Asked again, the page refuses as canceled; the payment never succeeds.
    expect(await grpcFailure(client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'payment_canceled' });
    expect(await types(payments.databaseUrl, payment!.id)).toEqual(['recur.payments.v1.PaymentCanceled']);
  });
});

describe('the sandbox payer page decides by magic numbers', () => {
  it('approve succeeds: the invoice is paid (amount_paid set, invoice.paid once)', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant, 2_500);
    const { payment } = await initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    const { payment: settled } = await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' });
    expect(settled).toMatchObject({ status: 'succeeded' });
    const paid = await eventually(async () => ((await invoiceOf(tenant, invoice.id)).status === 'paid' ? invoiceOf(tenant, invoice.id) : undefined), 10_000, 'invoice paid');
    expect(paid.amountPaid!.amountMinor).toBe(2_500n);
    expect(paid.amountDue!.amountMinor).toBe(0n);
    expect(Number(paid.paidAt)).toBeGreaterThan(0);
    const events = await outbox(invoicing.databaseUrl, invoice.id);
    expect(events.filter((row) => row.type === 'invoice.paid')).toHaveLength(1);
    expect(events.find((row) => row.type === 'invoice.paid')!.payload).toMatchObject({ data: { payment: payment!.id, object: { status: 'paid', amount_paid: 2_500 } } });
    expect(await types(payments.databaseUrl, payment!.id)).toEqual(['recur.payments.v1.PaymentSucceeded']);
    // Deciding again changes nothing.
    expect((await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'decline' })).payment).toMatchObject({ status: 'succeeded' });
  });

  it('the fail number fails on approve (invoice failed, invoice.payment_failed); a new payment of the failed invoice can then succeed', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant, 700);
    const { payment } = await initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.fail);
    expect((await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' })).payment).toMatchObject({ status: 'failed', failureCode: 'insufficient_funds' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'failed', 10_000, 'invoice failed');
    const failedEvent = (await outbox(invoicing.databaseUrl, invoice.id)).find((row) => row.type === 'invoice.payment_failed');
    expect(failedEvent!.payload).toMatchObject({ data: { payment: payment!.id, failure_code: 'insufficient_funds', object: { status: 'failed' } } });

    const { payment: retry } = await initiate(tenant, invoice.id, SANDBOX_MAGIC_NUMBERS.succeed);
    expect(retry!.id).not.toBe(payment!.id);
    await client.decideSandboxPayment({ token: token(retry!.redirectUrl), decision: 'approve' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 10_000, 'invoice paid after failing');
  });

  it('the pending number stays pending on approve; decline always fails', async () => {
    const tenant = newTenant();
    const pendingInvoice = await openInvoice(tenant);
    const { payment } = await initiate(tenant, pendingInvoice.id, SANDBOX_MAGIC_NUMBERS.pending);
    expect((await client.getPayerPage({ token: token(payment!.redirectUrl) })).expectedOutcome).toBe('pending');
    expect((await client.decideSandboxPayment({ token: token(payment!.redirectUrl), decision: 'approve' })).payment).toMatchObject({ status: 'pending' });
    const declined = await openInvoice(tenant);
    const { payment: other } = await initiate(tenant, declined.id, SANDBOX_MAGIC_NUMBERS.succeed);
    expect((await client.decideSandboxPayment({ token: token(other!.redirectUrl), decision: 'decline' })).payment).toMatchObject({ status: 'failed', failureCode: 'payment_declined' });
  });
});

describe('pawaPay callbacks and the janitor', () => {
  async function livePayment(amount = 5_000) {
    const tenant = newTenant(true);
    const invoice = await openInvoice(tenant, amount);
    const { payment } = await initiate(tenant, invoice.id);
    const depositId = (requestsTo('/v2/paymentpage').find((r) => (r.body as { metadata: { paymentId?: string }[] }).metadata.some((m) => m.paymentId === payment!.id))!.body as { depositId: string }).depositId;
    return { tenant, invoice, payment: payment!, depositId };
  }
  const deliver = (callback: ReturnType<FakePawapay['callback']>) => client.handleProviderCallback({ provider: 'pawapay', ...callback });

  it('a signed callback settles the payment and the invoice; the same callback twice changes nothing', async () => {
    const { tenant, invoice, payment, depositId } = await livePayment();
    pawapay.finish(depositId, 'COMPLETED');
    const callback = pawapay.callback(CALLBACK_URL, depositId);
    expect(await deliver(callback)).toMatchObject({ outcome: 'settled', paymentId: payment.id });
    expect(await deliver(callback)).toMatchObject({ outcome: 'already_settled', paymentId: payment.id });
    expect((await client.getPayment({ tenant, id: payment.id })).payment).toMatchObject({ status: 'succeeded' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 10_000, 'invoice paid');
    expect(await types(payments.databaseUrl, payment.id)).toEqual(['recur.payments.v1.PaymentSucceeded']);
  });

  it('never marks an invoice paid by another sum: a COMPLETED deposit of a different amount fails the payment (amount_mismatch)', async () => {
    const { tenant, invoice, payment, depositId } = await livePayment(5_000);
    pawapay.finish(depositId, 'COMPLETED').amount = '49.99';
    expect(await deliver(pawapay.callback(CALLBACK_URL, depositId))).toMatchObject({ outcome: 'settled', paymentId: payment.id });
    expect((await client.getPayment({ tenant, id: payment.id })).payment).toMatchObject({ status: 'failed', failureCode: 'amount_mismatch' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'failed', 10_000, 'invoice failed');
    expect(await types(payments.databaseUrl, payment.id)).toEqual(['recur.payments.v1.PaymentFailed']);
  });

  it('refuses a callback that is unsigned, tampered with or signed by another key (UNAUTHENTICATED), and settles nothing', async () => {
    const { tenant, payment, depositId } = await livePayment();
    pawapay.finish(depositId, 'COMPLETED');
    const signed = pawapay.callback(CALLBACK_URL, depositId);
    const { signature: _s, 'signature-input': _i, ...unsigned } = signed.headers;
    const attempts = [
      { ...signed, headers: unsigned },
      pawapay.callback(CALLBACK_URL, depositId, { tamper: true }),
      pawapay.callback(CALLBACK_URL, depositId, { key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }),
      { ...signed, path: '/callbacks/other' },
    ];
    for (const attempt of attempts) {
      expect(await grpcFailure(deliver(attempt))).toMatchObject({ code: grpc.status.UNAUTHENTICATED, errorCode: 'signature_invalid' });
    }
    expect((await client.getPayment({ tenant, id: payment.id })).payment!.status).toBe('pending');
  });

  it('a sandbox payment cannot be settled by a pawaPay callback', async () => {
    const tenant = newTenant(false);
    const invoice = await openInvoice(tenant);
    const { payment } = await initiate(tenant, invoice.id);
    const providerPaymentId = (await queryDatabase<{ provider_payment_id: string }>(payments.databaseUrl, 'SELECT provider_payment_id FROM payments WHERE id = $1', [payment!.id]))[0].provider_payment_id;
    pawapay.deposits.set(providerPaymentId, { depositId: providerPaymentId, status: 'COMPLETED', amount: '123.45', currency: 'ZMW', country: 'ZMB', phoneNumber: '260971234567', provider: 'MTN_MOMO_ZMB' });
    expect(await deliver(pawapay.callback(CALLBACK_URL, providerPaymentId))).toMatchObject({ outcome: 'unknown_payment' });
    expect((await client.getPayment({ tenant, id: payment!.id })).payment!.status).toBe('pending');
  });

  it('the janitor settles a pending payment whose callback never comes, from pawaPay’s deposit status', async () => {
    const { tenant, invoice, payment, depositId } = await livePayment();
    pawapay.finish(depositId, 'FAILED');
    await eventually(async () => (await client.getPayment({ tenant, id: payment.id })).payment!.status === 'failed', 15_000, 'the janitor to fail the payment');
    expect((await client.getPayment({ tenant, id: payment.id })).payment).toMatchObject({ failureCode: 'insufficient_balance' });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'failed', 10_000, 'invoice failed');
    expect(requestsTo(`/v2/deposits/${depositId}`).length).toBeGreaterThan(0);
  });

  it('callbacks racing each other and the janitor settle once: one PaymentSucceeded, one invoice.paid', async () => {
    const { tenant, invoice, payment, depositId } = await livePayment();
    // The janitor's status check of the pending payment (due 400 ms after it began) is held
    // unanswered: the janitor is then between its question and its settlement when the race begins.
    const statusChecks = pawapay.holdStatusChecks(depositId);
    pawapay.finish(depositId, 'COMPLETED');
    // Had its first check come before the hold (a slow machine), the payment is due again in a
    // minute: bring it forward, unless the janitor holds it now.
    await queryDatabase(payments.databaseUrl, 'UPDATE payments SET due_at = now() WHERE id = $1 AND (lease_until IS NULL OR lease_until < now())', [payment.id]);
    await eventually(async () => statusChecks.held() === 1 || undefined, 10_000, 'the janitor to ask pawaPay about the pending payment');
    // Hold the payment's row so every settler reaches it at the same moment: two callbacks queue
    // behind the lock, then the janitor (its answer released) joins them, and all race when it is
    // released. Waiters on the row are counted in PostgreSQL: the janitor's arrival is the third.
    const holder = await connectDatabase(payments.databaseUrl);
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [payment.id]);
    const waitingOnLock = async () =>
      Number((await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n);
    const racing = Promise.all(Array.from({ length: 2 }, () => deliver(pawapay.callback(CALLBACK_URL, depositId))));
    await eventually(async () => (await waitingOnLock()) === 2 || undefined, 10_000, 'two callbacks waiting on the payment’s row');
    statusChecks.release();
    await eventually(async () => (await waitingOnLock()) === 3 || undefined, 10_000, 'the janitor waiting on the payment’s row with the callbacks');
    await holder.query('COMMIT');
    await holder.end();
    const outcomes = await racing;
    expect(outcomes.filter((o) => o.outcome === 'settled').length).toBeLessThanOrEqual(1);
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 10_000, 'invoice paid');
    // Give the janitor time to tell invoicing too, then count.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // One claim of the payment as pending, held once: the janitor raced, and lost or won, once.
    expect(statusChecks.held()).toBe(1);
    expect(await types(payments.databaseUrl, payment.id)).toEqual(['recur.payments.v1.PaymentSucceeded']);
    expect((await types(invoicing.databaseUrl, invoice.id)).filter((type) => type === 'invoice.paid')).toHaveLength(1);
  });
});

describe('RetryInvoicePayment (smart retries, docs/api/dunning.md#smart-retries)', () => {
  /** An open invoice of a customer whose default payment method is `phoneNumber` (none when undefined). */
  async function invoiceWithMethod(tenant: Tenant, phoneNumber: string | undefined) {
    const { customer } = await subscription.client.createCustomer({ tenant, name: 'Chisomo Tembo', email: 'chisomo@example.com' });
    if (phoneNumber) await client.createPaymentMethod({ tenant, customerId: customer!.id, phoneNumber, provider: 'MTN_MOMO_ZMB', consent: true, requestId: '' });
    const { invoice } = await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: 5_000n, currency: 'zmw', description: 'Water, May', status: 'open' });
    return invoice!;
  }
  const retry = (tenant: Tenant, invoiceId: string, attempt: number, requestId = `payment_retry:${invoiceId}:${attempt}`) =>
    client.retryInvoicePayment({ tenant, invoiceId, attempt, requestId });
  const providerIds = async (invoiceId: string) =>
    (await queryDatabase<{ provider_payment_id: string }>(payments.databaseUrl, 'SELECT provider_payment_id FROM payments WHERE invoice_id = $1 ORDER BY created_at', [invoiceId])).map((row) => row.provider_payment_id);

  it('pushes attempt n to the default method, keyed collect:<invoice>:<n>; a repeat answers the same push', async () => {
    const tenant = newTenant(false);
    const invoice = await invoiceWithMethod(tenant, SANDBOX_MAGIC_NUMBERS.succeed);
    const first = await retry(tenant, invoice.id, 2);
    expect(first).toMatchObject({ outcome: 'pushed', payment: { invoiceId: invoice.id, phoneNumber: SANDBOX_MAGIC_NUMBERS.succeed, amount: { amountMinor: 5_000n } } });
    expect((await retry(tenant, invoice.id, 2)).payment!.id).toBe(first.payment!.id);
    const [keyed] = await queryDatabase<{ provider_payment_id: string; channel: string }>(payments.databaseUrl, 'SELECT provider_payment_id, channel FROM payments WHERE id = $1', [first.payment!.id]);
    // The key fixes the provider's id, so the provider de-duplicates a repeat.
    expect(keyed).toEqual({ provider_payment_id: providerPaymentIdFor(`collect:${invoice.id}:2`), channel: 'push' });
    // The simulated phone answers: the invoice is paid with nobody at a page.
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 15_000, 'the invoice paid');
  });

  it('waits (UNAVAILABLE, nothing recorded) while an earlier attempt is still pending, then pushes its own', async () => {
    const tenant = newTenant(false);
    const invoice = await invoiceWithMethod(tenant, SANDBOX_MAGIC_NUMBERS.pending);
    await retry(tenant, invoice.id, 2);
    expect(await grpcFailure(retry(tenant, invoice.id, 3))).toMatchObject({ code: grpc.status.UNAVAILABLE, errorCode: 'payment_pending' });
    expect(await providerIds(invoice.id)).toHaveLength(1);
    // Attempt 2 ends (the payer's page session ran out): attempt 3, asked again with the same request id, pushes.
    await queryDatabase(payments.databaseUrl, "UPDATE payments SET status = 'failed', failure_code = 'payment_not_approved', settled_at = now() WHERE invoice_id = $1", [invoice.id]);
    expect((await retry(tenant, invoice.id, 3)).outcome).toBe('pushed');
    expect(await providerIds(invoice.id)).toHaveLength(2);
  });

  it('charges nothing for an invoice voided or paid meanwhile (not_owed), nor for a customer without a default method', async () => {
    const tenant = newTenant(false);
    const voided = await invoiceWithMethod(tenant, SANDBOX_MAGIC_NUMBERS.succeed);
    await invoicing.client.voidInvoice({ tenant, id: voided.id, requestId: '' });
    expect(await retry(tenant, voided.id, 2)).toMatchObject({ outcome: 'not_owed', reason: 'invoice_void' });

    const paid = await invoiceWithMethod(tenant, SANDBOX_MAGIC_NUMBERS.succeed);
    await retry(tenant, paid.id, 2);
    await eventually(async () => (await invoiceOf(tenant, paid.id)).status === 'paid', 15_000, 'the invoice paid');
    expect(await retry(tenant, paid.id, 3)).toMatchObject({ outcome: 'not_owed', reason: 'invoice_paid' });
    expect(await providerIds(paid.id)).toHaveLength(1);
    expect(await providerIds(voided.id)).toEqual([]);

    const without = await invoiceWithMethod(tenant, undefined);
    expect(await retry(tenant, without.id, 2)).toMatchObject({ outcome: 'no_payment_method' });
    expect(await grpcFailure(retry(tenant, without.id, 1))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'attempt' });
  });
});
