import * as grpc from '@grpc/grpc-js';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
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
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9' });
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
const refund = (tenant: Tenant, invoiceId: string, reason = 'requested_by_customer', requestId = `req_${randomBytes(6).toString('hex')}`) =>
  client.refundInvoice({ tenant, invoiceId, reason, requestId });
const refundRequests = () => pawapay.requests.filter((request) => request.path === '/v2/refunds');

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

  it('refunds a live invoice at pawaPay (the documented request, our refundId, the deposit that paid it)', async () => {
    const tenant = newTenant(true);
    const { invoice, depositId } = await paidLiveInvoice(tenant);
    const { creditNote } = await refund(tenant, invoice.id, 'fraudulent');
    const sent = refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId);
    expect(sent).toHaveLength(1);
    expect(sent[0].body).toMatchObject({ depositId, amount: '75.00', currency: 'ZMW' });
    expect((sent[0].body as { refundId: string }).refundId).toMatch(/^[0-9a-f-]{36}$/);
    expect(creditNote).toMatchObject({ number: 'CN-000001', livemode: true, reason: 'fraudulent' });
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
    const succeeded = results.filter((result) => result.status === 'fulfilled');
    expect(succeeded).toHaveLength(1);
    for (const result of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      expect(await grpcFailure(Promise.reject(result.reason))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    }
    expect((await invoicing.client.listCreditNotes({ tenant, page: { limit: 10, offset: 0 }, invoiceId: invoice.id })).creditNotes).toHaveLength(1);
    expect(refundRequests().filter((request) => (request.body as { depositId: string }).depositId === depositId)).toHaveLength(1);
  });

  it('a refund whose process died after keeping it, or after the provider carried it out, still ends in its credit note (the refund worker)', async () => {
    for (const leftAt of ['pending', 'succeeded'] as const) {
      const tenant = newTenant(true);
      const { invoice, payment, depositId } = await paidLiveInvoice(tenant);
      const id = `cn_${randomBytes(12).toString('hex')}`;
      const providerRefundId = randomUUID();
      // The row a request leaves when its process dies at that point (RefundsService.begin / saveProviderResult).
      await queryDatabase(payments.databaseUrl, `
        INSERT INTO refunds (id, account_id, livemode, invoice_id, payment_id, amount, currency, reason, provider_refund_id, status, request_id, created_at, updated_at, due_at)
        VALUES ($1, $2, true, $3, $4, 7500, 'zmw', 'requested_by_customer', $5, $6, 'req_dead', now(), now(), now() + interval '300 milliseconds')`,
      [id, tenant.accountId, invoice.id, payment.id, providerRefundId, leftAt]);
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
