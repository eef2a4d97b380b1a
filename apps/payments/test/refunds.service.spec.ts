import * as grpc from '@grpc/grpc-js';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { invoicingV1, paymentsV1, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { type MailCatcher, startMailCatcher } from '@recur/local-infra';
import { eventually, grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { FakePawapay } from './fake-pawapay';

/**
 * Refunds and credit notes: the payments service refunds at the provider of the payment that
 * settled the invoice, the invoicing service records the credit note. Every service is its own
 * process on a real PostgreSQL, pawaPay a local stand-in; driven through gRPC only.
 */
jest.setTimeout(60_000);

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let payments: ServiceUnderTest<typeof paymentsV1.PaymentsService>;
let client: ServiceClient<typeof paymentsV1.PaymentsService>;
let mailCatcher: MailCatcher;
const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

beforeAll(async () => {
  await pawapay.start();
  mailCatcher = await startMailCatcher();
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, SMTP_URL: mailCatcher.url, INVOICE_MAIL_ON_FINALIZE: 'false' });
  payments = await startServiceUnderTest('payments', paymentsV1.PaymentsService, {
    INVOICING_GRPC_ADDR: invoicing.grpcAddress,
    PAWAPAY_BASE_URL: pawapay.baseUrl,
    PAWAPAY_API_TOKEN: pawapay.token,
    PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem,
    // A refund its request did not finish is taken over soon, so the crash tests see it.
    REFUND_RECOVERY_AFTER_MS: '300',
  });
  client = payments.client;
}, 120_000);

afterAll(async () => {
  await payments?.stop();
  await invoicing?.stop();
  await subscription?.stop();
  await pawapay.stop();
  await mailCatcher?.stop();
});

const newTenant = (livemode = false) => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode });
type Tenant = ReturnType<typeof newTenant>;
const invoiceOf = async (tenant: Tenant, id: string) => (await invoicing.client.getInvoice({ tenant, id })).invoice!;
const refund = (tenant: Tenant, invoiceId: string, reason = 'requested_by_customer', requestId = `req_${randomBytes(6).toString('hex')}`, amount?: number) =>
  client.refundInvoice({ tenant, invoiceId, reason, requestId, ...(amount === undefined ? {} : { amount: BigInt(amount) }) });
const partialRefund = (tenant: Tenant, invoiceId: string, amount: number, requestId?: string) => refund(tenant, invoiceId, 'requested_by_customer', requestId, amount);
const refundRequests = () => pawapay.requests.filter((request) => request.path === '/v2/refunds');
/** Where pawaPay sends refund callbacks (the gateway's `/callbacks/pawapay/refunds`). */
const REFUND_CALLBACK_URL = 'https://recur.example.test/callbacks/pawapay/refunds';
/** Our refundId at pawaPay of refund `id` (cn_…), as the refund row keeps it. */
const providerRefundIdOf = async (id: string): Promise<string> =>
  (await queryDatabase<{ provider_refund_id: string }>(payments.databaseUrl, 'SELECT provider_refund_id FROM refunds WHERE id = $1', [id]))[0].provider_refund_id;

async function invoiceFor(tenant: Tenant, status = 'open', amount = 7_500) {
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Mwila Banda', email: 'mwila@example.com' });
  return (await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: BigInt(amount), currency: 'zmw', description: 'Internet, December', status })).invoice!;
}

/** A sandbox invoice paid through the payer page (the succeed number). */
async function paidSandboxInvoice(tenant: Tenant) {
  const invoice = await invoiceFor(tenant);
  const { payment } = await client.initiatePayment({ tenant, invoiceId: invoice.id, phoneNumber: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB', requestId: '' });
  await client.decideSandboxPayment({ token: payment!.redirectUrl.slice(payment!.redirectUrl.lastIndexOf('/') + 1), decision: 'approve' });
  await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 10_000, 'invoice paid');
  return { invoice: await invoiceOf(tenant, invoice.id), payment: payment! };
}

/** A live invoice paid at pawaPay (its page, then its signed callback). */
async function paidLiveInvoice(tenant: Tenant) {
  const invoice = await invoiceFor(tenant);
  const { payment } = await client.initiatePayment({ tenant, invoiceId: invoice.id, phoneNumber: '+260971234567', provider: 'MTN_MOMO_ZMB', requestId: '' });
  const depositId = (pawapay.requests.find((r) => r.path === '/v2/paymentpage' && (r.body as { metadata: { paymentId?: string }[] }).metadata.some((m) => m.paymentId === payment!.id))!.body as { depositId: string }).depositId;
  pawapay.finish(depositId, 'COMPLETED');
  await client.handleProviderCallback({ provider: 'pawapay', ...pawapay.callback('https://recur.example.test/callbacks/pawapay', depositId) });
  await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'paid', 10_000, 'invoice paid');
  return { invoice: await invoiceOf(tenant, invoice.id), payment: payment!, depositId };
}

const publicEvents = (invoiceId: string) =>
  queryDatabase<{ type: string; payload: { data: Record<string, unknown> } }>(invoicing.databaseUrl, "SELECT type, payload FROM outbox_events WHERE key = $1 AND topic LIKE '%.public' ORDER BY seq", [invoiceId]);

describe('refunds', () => {
  it('refunds a paid sandbox invoice: a numbered credit note (cn_…, CN-000001), the invoice refunded, invoice.refunded once, pawaPay never called', async () => {
    const tenant = newTenant();
    const { invoice, payment } = await paidSandboxInvoice(tenant);
    const before = refundRequests().length;
    const { creditNote } = await refund(tenant, invoice.id, 'duplicate');
    expect(creditNote).toMatchObject({ number: 'CN-000001', invoiceId: invoice.id, invoiceNumber: invoice.number, customerId: invoice.customerId, reason: 'duplicate', paymentId: payment.id, livemode: false, amount: { amountMinor: 7_500n, currency: 'zmw' } });
    expect(creditNote!.id).toMatch(/^cn_/);
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ status: 'refunded', amountPaid: { amountMinor: 7_500n } });
    const refunded = (await publicEvents(invoice.id)).filter((event) => event.type === 'invoice.refunded');
    expect(refunded).toHaveLength(1);
    expect(refunded[0].payload.data).toMatchObject({ object: { id: invoice.id, status: 'refunded' }, credit_note: { id: creditNote!.id, number: 'CN-000001', amount: 7_500, reason: 'duplicate' } });
    expect(refundRequests()).toHaveLength(before);
    // The second refund of the account's app takes the next number.
    const second = await paidSandboxInvoice(tenant);
    expect((await refund(tenant, second.invoice.id)).creditNote!.number).toBe('CN-000002');
  });

  it('refuses an already refunded, an unpaid, a draft, a void and an unknown invoice, and an unknown reason, each with its own code', async () => {
    const tenant = newTenant();
    const { invoice } = await paidSandboxInvoice(tenant);
    await refund(tenant, invoice.id);
    expect(await grpcFailure(refund(tenant, invoice.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    const open = await invoiceFor(tenant);
    expect(await grpcFailure(refund(tenant, open.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_not_paid' });
    const draft = await invoiceFor(tenant, 'draft');
    expect(await grpcFailure(refund(tenant, draft.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_draft' });
    const voided = await invoiceFor(tenant);
    await invoicing.client.voidInvoice({ tenant, id: voided.id, requestId: '' });
    expect(await grpcFailure(refund(tenant, voided.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_void' });
    expect(await grpcFailure(refund(tenant, 'in_nope'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'invoice_id' });
    expect(await grpcFailure(refund(newTenant(), invoice.id))).toMatchObject({ errorCode: 'resource_missing' });
    expect(await grpcFailure(refund(tenant, open.id, 'changed_my_mind'))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'reason' });
    const { creditNotes } = await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 } });
    expect(creditNotes).toHaveLength(1);
  });

  it('refunds a live invoice at pawaPay (the documented request, our refundId, the deposit that paid it); accepted is not done: the credit note comes with the COMPLETED callback', async () => {
    const tenant = newTenant(true);
    const { invoice, depositId } = await paidLiveInvoice(tenant);
    const answer = await refund(tenant, invoice.id, 'fraudulent', 'req_live_refund');
    const sent = refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId);
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({ depositId, amount: '75.00', currency: 'ZMW' });
    const refundId = (sent[0].body as { refundId: string }).refundId;
    expect(refundId).toMatch(/^[0-9a-f-]{36}$/);
    // ACCEPTED by pawaPay: still processing; the invoice stays paid, no credit note, no number taken.
    expect(answer.creditNote).toBeUndefined();
    expect(answer.refund).toMatchObject({ id: expect.stringMatching(/^cn_/), status: 'processing', invoiceId: invoice.id, reason: 'fraudulent', amount: { amountMinor: 7_500n, currency: 'zmw' } });
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ status: 'paid' });
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 } })).creditNotes).toHaveLength(0);
    expect(await grpcFailure(refund(tenant, invoice.id))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    expect((await client.getRefund({ tenant, id: answer.refund!.id })).refund).toMatchObject({ status: 'processing', failureCode: '' });
    expect(await grpcFailure(client.getRefund({ tenant: newTenant(true), id: answer.refund!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    pawapay.finishRefund(refundId, 'COMPLETED');
    const callback = pawapay.refundCallback(REFUND_CALLBACK_URL, refundId);
    expect((await client.handleProviderRefundCallback({ provider: 'pawapay', ...callback })).refundId).toBe(answer.refund!.id);
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 10_000, 'invoice refunded');
    expect((await invoicing.client.getCreditNote({ tenant, id: answer.refund!.id })).creditNote).toMatchObject({ number: 'CN-000001', livemode: true, reason: 'fraudulent' });
    expect((await publicEvents(invoice.id)).filter((event) => event.type === 'invoice.refunded')).toHaveLength(1);
    // The same callback again changes nothing.
    expect(await client.handleProviderRefundCallback({ provider: 'pawapay', ...callback })).toMatchObject({ outcome: 'already_settled', refundId: answer.refund!.id });
    // A repeat of the request now answers the credit note.
    expect((await refund(tenant, invoice.id, 'fraudulent', 'req_live_refund')).creditNote).toMatchObject({ id: answer.refund!.id, number: 'CN-000001' });
  });

  it('a refund pawaPay reports FAILED (callback) makes no credit note, takes no number and leaves the invoice paid; it may be refunded again', async () => {
    const tenant = newTenant(true);
    const { invoice } = await paidLiveInvoice(tenant);
    const { refund: first } = await refund(tenant, invoice.id);
    const refundId = await providerRefundIdOf(first!.id);
    pawapay.finishRefund(refundId, 'FAILED');
    const outcome = await client.handleProviderRefundCallback({ provider: 'pawapay', ...pawapay.refundCallback(REFUND_CALLBACK_URL, refundId) });
    expect(['settled', 'already_settled']).toContain(outcome.outcome); // the worker's status check may have been first
    const [row] = await queryDatabase<{ status: string; failure_code: string; due_at: Date | null }>(payments.databaseUrl, 'SELECT status, failure_code, due_at FROM refunds WHERE id = $1', [first!.id]);
    expect(row).toEqual({ status: 'failed', failure_code: 'recipient_not_allowed_to_receive', due_at: null });
    expect((await client.getRefund({ tenant, id: first!.id })).refund).toMatchObject({ status: 'failed', failureCode: 'recipient_not_allowed_to_receive', failureMessage: 'The recipient is not allowed to receive the refund.' });
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ status: 'paid' });
    expect(await grpcFailure(invoicing.client.getCreditNote({ tenant, id: first!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect((await publicEvents(invoice.id)).filter((event) => event.type === 'invoice.refunded')).toHaveLength(0);
    // A second refund is allowed, and when it completes its credit note is CN-000001: the failed one took no number.
    const { refund: second } = await refund(tenant, invoice.id);
    pawapay.finishRefund(await providerRefundIdOf(second!.id), 'COMPLETED');
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 15_000, 'the second refund completed (status check)');
    expect((await invoicing.client.getCreditNote({ tenant, id: second!.id })).creditNote).toMatchObject({ number: 'CN-000001' });
  });

  it('eight copies of a COMPLETED refund callback racing the refund worker\'s status check settle it once: one credit note, one invoice.refunded', async () => {
    const tenant = newTenant(true);
    const { invoice } = await paidLiveInvoice(tenant);
    const { refund: accepted } = await refund(tenant, invoice.id);
    const refundId = await providerRefundIdOf(accepted!.id);
    pawapay.finishRefund(refundId, 'COMPLETED');
    const callback = pawapay.refundCallback(REFUND_CALLBACK_URL, refundId);
    // The worker's status check is due now, as the callbacks arrive.
    await queryDatabase(payments.databaseUrl, 'UPDATE refunds SET due_at = now() WHERE id = $1', [accepted!.id]);
    await queryDatabase(payments.databaseUrl, "SELECT pg_notify('refunds_due', '')");
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => client.handleProviderRefundCallback({ provider: 'pawapay', ...callback })));
    expect(outcomes.filter((answer) => answer.outcome === 'settled').length).toBeLessThanOrEqual(1);
    expect(outcomes.every((answer) => ['settled', 'already_settled'].includes(answer.outcome) && answer.refundId === accepted!.id)).toBe(true);
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 10_000, 'invoice refunded');
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // room for a second settlement, were there one
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, invoiceId: invoice.id })).creditNotes.map((note) => note.number)).toEqual(['CN-000001']);
    expect((await publicEvents(invoice.id)).filter((event) => event.type === 'invoice.refunded')).toHaveLength(1);
    const [row] = await queryDatabase<{ status: string; due_at: Date | null; recorded_at: Date | null }>(payments.databaseUrl, 'SELECT status, due_at, recorded_at FROM refunds WHERE id = $1', [accepted!.id]);
    expect(row).toMatchObject({ status: 'succeeded', due_at: null });
    expect(row.recorded_at).not.toBeNull();
  });

  it('a refund callback for a refund Recur does not know, or with a bad signature, settles nothing', async () => {
    const tenant = newTenant(true);
    const { invoice } = await paidLiveInvoice(tenant);
    const { refund: accepted } = await refund(tenant, invoice.id);
    const refundId = await providerRefundIdOf(accepted!.id);
    pawapay.finishRefund(refundId, 'COMPLETED');
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(await grpcFailure(client.handleProviderRefundCallback({ provider: 'pawapay', ...pawapay.refundCallback(REFUND_CALLBACK_URL, refundId, { key: stranger }) }))).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const unknownId = randomUUID();
    pawapay.refunds.set(unknownId, { ...pawapay.refunds.get(refundId)!, refundId: unknownId });
    expect(await client.handleProviderRefundCallback({ provider: 'pawapay', ...pawapay.refundCallback(REFUND_CALLBACK_URL, unknownId) })).toMatchObject({ outcome: 'unknown_refund', refundId: '' });
    expect(await grpcFailure(client.handleProviderRefundCallback({ provider: 'sandbox', ...pawapay.refundCallback(REFUND_CALLBACK_URL, refundId) }))).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
  });

  it('a repeat with the same request id answers the same credit note', async () => {
    const tenant = newTenant();
    const { invoice } = await paidSandboxInvoice(tenant);
    const first = await refund(tenant, invoice.id, 'duplicate', 'req_same');
    expect((await refund(tenant, invoice.id, 'duplicate', 'req_same')).creditNote).toEqual(first.creditNote);
  });

  it('of eight refunds of one invoice at the same moment, exactly one succeeds; one credit note, one refund at pawaPay', async () => {
    const tenant = newTenant(true);
    const { invoice, depositId } = await paidLiveInvoice(tenant);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => refund(tenant, invoice.id)));
    const succeeded = results.filter((result): result is PromiseFulfilledResult<Awaited<ReturnType<typeof refund>>> => result.status === 'fulfilled');
    expect(succeeded).toHaveLength(1);
    for (const result of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(await grpcFailure(Promise.reject(result.reason))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    }
    expect(refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId)).toHaveLength(1);
    pawapay.finishRefund(await providerRefundIdOf(succeeded[0].value.refund!.id), 'COMPLETED');
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 15_000, 'invoice refunded');
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, invoiceId: invoice.id })).creditNotes).toHaveLength(1);
  });

  it('a refund whose process died after keeping it, while pawaPay processed it, or after pawaPay completed it, still ends in its credit note (the refund worker)', async () => {
    for (const leftAt of ['pending', 'processing', 'succeeded'] as const) {
      const tenant = newTenant(true);
      const { invoice, payment, depositId } = await paidLiveInvoice(tenant);
      const id = `cn_${randomBytes(12).toString('hex')}`;
      const providerRefundId = randomUUID();
      // The row a request leaves when its process dies at that point (RefundsService.begin / saveProviderResult).
      await queryDatabase(payments.databaseUrl, `
        INSERT INTO refunds (id, account_id, livemode, invoice_id, payment_id, amount, currency, reason, provider_refund_id, status, request_id, created_at, updated_at, due_at)
        VALUES ($1, $2, true, $3, $4, 7500, 'zmw', 'requested_by_customer', $5, $6, 'req_dead', now(), now(), now() + interval '300 milliseconds')`,
      [id, tenant.accountId, invoice.id, payment.id, providerRefundId, leftAt]);
      // pawaPay completes what it was asked: a refund it processes (status checks find it COMPLETED), or one the worker asks for now.
      if (leftAt === 'processing') pawapay.refunds.set(providerRefundId, { refundId: providerRefundId, depositId, status: 'COMPLETED', amount: '75.00', currency: 'ZMW', country: 'ZMB' });
      if (leftAt === 'pending') {
        await eventually(async () => pawapay.refunds.has(providerRefundId), 15_000, 'the worker asked pawaPay for the refund');
        pawapay.finishRefund(providerRefundId, 'COMPLETED');
      }
      await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 15_000, `the ${leftAt} refund finished`);
      expect((await invoicing.client.getCreditNote({ tenant, id })).creditNote).toMatchObject({ id, number: 'CN-000001', invoiceId: invoice.id });
      const [row] = await queryDatabase<{ status: string; due_at: Date | null; recorded_at: Date | null }>(payments.databaseUrl, 'SELECT status, due_at, recorded_at FROM refunds WHERE id = $1', [id]);
      expect(row).toMatchObject({ status: 'succeeded', due_at: null });
      expect(row.recorded_at).not.toBeNull();
      // Only a refund the provider had not confirmed is sent to it, with the id it was kept with.
      const sent = refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId);
      expect(sent.map((request) => (request.body as { refundId: string }).refundId)).toEqual(leftAt === 'pending' ? [providerRefundId] : []);
    }
  });
});

describe('partial refunds', () => {
  it('several refunds of one invoice: each its own credit note and number; the invoice stays paid with amount_refunded until all of it is back, then refunded once', async () => {
    const tenant = newTenant();
    const { invoice } = await paidSandboxInvoice(tenant);
    const first = await partialRefund(tenant, invoice.id, 2_000);
    expect(first.creditNote).toMatchObject({ number: 'CN-000001', amount: { amountMinor: 2_000n, currency: 'zmw' } });
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ status: 'paid', amountPaid: { amountMinor: 7_500n }, amountRefunded: { amountMinor: 2_000n } });
    // More than is left (7 500 − 2 000) is refused and changes nothing.
    expect(await grpcFailure(partialRefund(tenant, invoice.id, 5_501))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_too_large', param: 'amount' });
    expect(await grpcFailure(partialRefund(tenant, invoice.id, 0))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'amount' });
    // No amount: all that is left.
    const rest = await refund(tenant, invoice.id);
    expect(rest.creditNote).toMatchObject({ number: 'CN-000002', amount: { amountMinor: 5_500n } });
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ status: 'refunded', amountRefunded: { amountMinor: 7_500n } });
    expect(await grpcFailure(partialRefund(tenant, invoice.id, 1))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    const events = await publicEvents(invoice.id);
    expect(events.filter((event) => event.type === 'credit_note.created').map((event) => (event.payload.data.object as { amount: number }).amount)).toEqual([2_000, 5_500]);
    expect(events.filter((event) => event.type === 'credit_note.created')[0].payload.data.invoice).toMatchObject({ id: invoice.id, status: 'paid', amount_refunded: 2_000 });
    const refunded = events.filter((event) => event.type === 'invoice.refunded');
    expect(refunded).toHaveLength(1);
    expect(refunded[0].payload.data).toMatchObject({ object: { status: 'refunded', amount_refunded: 7_500 }, credit_note: { number: 'CN-000002', amount: 5_500 } });
  });

  it('refunds racing for one invoice never give back more than was paid: of eight of 2 000 on 7 500, three are kept and the rest refused', async () => {
    const tenant = newTenant(true);
    const { invoice, depositId } = await paidLiveInvoice(tenant);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => partialRefund(tenant, invoice.id, 2_000)));
    const kept = results.filter((result) => result.status === 'fulfilled');
    expect(kept).toHaveLength(3);
    for (const result of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(await grpcFailure(Promise.reject(result.reason))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_too_large' });
    }
    const sent = refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId);
    expect(sent.map((request) => (request.body as { amount: string }).amount)).toEqual(['20.00', '20.00', '20.00']);
    // While they are under way the 1 500 left may still be refunded; then nothing.
    const last = await partialRefund(tenant, invoice.id, 1_500);
    expect(await grpcFailure(partialRefund(tenant, invoice.id, 1))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    for (const request of [...sent, ...refundRequests().filter((r) => (r.body as { depositId: string }).depositId === depositId).slice(3)]) {
      pawapay.finishRefund((request.body as { refundId: string }).refundId, 'COMPLETED');
    }
    expect(last.refund!.amount).toMatchObject({ amountMinor: 1_500n });
    await eventually(async () => (await invoiceOf(tenant, invoice.id)).status === 'refunded', 20_000, 'the four refunds completed (status checks)');
    const notes = (await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, invoiceId: invoice.id })).creditNotes;
    expect(notes.map((note) => Number(note.amount!.amountMinor)).sort()).toEqual([1_500, 2_000, 2_000, 2_000]);
    expect(await invoiceOf(tenant, invoice.id)).toMatchObject({ amountRefunded: { amountMinor: 7_500n } });
  });

  it('a failed partial refund gives its amount back to what may be refunded; a repeat of a request answers its own refund, not a second one', async () => {
    const tenant = newTenant(true);
    const { invoice } = await paidLiveInvoice(tenant);
    const { refund: first } = await partialRefund(tenant, invoice.id, 7_000, 'req_partial_same');
    expect((await partialRefund(tenant, invoice.id, 7_000, 'req_partial_same')).refund!.id).toBe(first!.id);
    expect(await grpcFailure(partialRefund(tenant, invoice.id, 501))).toMatchObject({ errorCode: 'amount_too_large' });
    pawapay.finishRefund(await providerRefundIdOf(first!.id), 'FAILED');
    await client.handleProviderRefundCallback({ provider: 'pawapay', ...pawapay.refundCallback(REFUND_CALLBACK_URL, await providerRefundIdOf(first!.id)) });
    await eventually(async () => (await client.getRefund({ tenant, id: first!.id })).refund!.status === 'failed', 10_000, 'refund failed');
    const { refund: second } = await partialRefund(tenant, invoice.id, 7_500);
    expect(second!.amount).toMatchObject({ amountMinor: 7_500n });
  });

  it('seeded random sequences of racing partial refunds: the credit notes add up to what was kept, never more than was paid (property)', async () => {
    let seed = 20261127;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let round = 0; round < 4; round += 1) {
      const tenant = newTenant();
      const { invoice } = await paidSandboxInvoice(tenant);
      const asked = Array.from({ length: 6 }, () => 1 + Math.floor(random() * 3_000));
      const results = await Promise.allSettled(asked.map((amount) => partialRefund(tenant, invoice.id, amount)));
      const keptAmounts = results.flatMap((result) => (result.status === 'fulfilled' ? [Number(result.value.creditNote!.amount!.amountMinor)] : []));
      const kept = keptAmounts.reduce((a, b) => a + b, 0);
      expect(kept).toBeLessThanOrEqual(7_500);
      const notes = (await invoicing.client.listCreditNotes({ tenant, page: { limit: 20, offset: 0 }, invoiceId: invoice.id })).creditNotes;
      expect(notes.reduce((total, note) => total + Number(note.amount!.amountMinor), 0)).toBe(kept);
      const after = await invoiceOf(tenant, invoice.id);
      expect(Number(after.amountRefunded!.amountMinor)).toBe(kept);
      expect(after.status).toBe(kept === 7_500 ? 'refunded' : 'paid');
      // Every refusal was because the amount did not fit in what was left when it was decided.
      for (const result of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
        expect(await grpcFailure(Promise.reject(result.reason))).toMatchObject({ errorCode: expect.stringMatching(/^(amount_too_large|invoice_refunded)$/) });
      }
    }
  });
});

describe('credit notes', () => {
  it('are listed newest first, filtered by invoice or customer, retrieved by id and rendered as their own PDF', async () => {
    const tenant = newTenant();
    const one = await paidSandboxInvoice(tenant);
    const two = await paidSandboxInvoice(tenant);
    const first = (await refund(tenant, one.invoice.id)).creditNote!;
    const second = (await refund(tenant, two.invoice.id, 'fraudulent')).creditNote!;
    const all = await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 } });
    expect(all.creditNotes.map((note) => note.number)).toEqual(['CN-000002', 'CN-000001']);
    expect(all.page).toMatchObject({ total: 2 });
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, invoiceId: one.invoice.id })).creditNotes.map((note) => note.id)).toEqual([first.id]);
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, customerId: two.invoice.customerId })).creditNotes.map((note) => note.id)).toEqual([second.id]);
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 1, offset: 1 } })).creditNotes.map((note) => note.id)).toEqual([first.id]);
    expect(await grpcFailure(invoicing.client.getCreditNote({ tenant: newTenant(), id: first.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    const { pdf, filename } = await invoicing.client.renderCreditNotePdf({ tenant, id: second.id, sellerName: 'Acme Fibre' });
    expect(filename).toBe('CN-000002.pdf');
    const text = execFileSync('pdftotext', ['-', '-'], { input: Buffer.from(pdf) }).toString('utf8');
    for (const words of ['Acme Fibre', 'Credit note', 'CN-000002', two.invoice.number, 'Fraudulent payment', 'ZMW', '75.00', 'CREDIT NOTE']) expect(text).toContain(words);
  });
});
