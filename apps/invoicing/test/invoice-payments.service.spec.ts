import * as grpc from '@grpc/grpc-js';
import { invoicingV1, subscriptionV1 } from '@recur/contracts';
import { grpcFailure, queryDatabase, NO_INVOICE_MAIL, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';

/**
 * The settlement moves the payments service calls: PayInvoice and FailInvoicePayment, on the
 * invoicing process with the real subscription service beside it, through gRPC only.
 */
jest.setTimeout(30_000);

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;

beforeAll(async () => {
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, ...NO_INVOICE_MAIL });
}, 120_000);

afterAll(async () => {
  await invoicing?.stop();
  await subscription?.stop();
});

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
const usd = (amount: number) => ({ amountMinor: BigInt(amount), currency: 'usd' });
const paymentId = () => `pay_${randomBytes(12).toString('hex')}`;
const publicTypes = async (id: string) =>
  (await queryDatabase<{ type: string }>(invoicing.databaseUrl, "SELECT type FROM outbox_events WHERE key = $1 AND topic LIKE '%.public' ORDER BY seq", [id])).map((row) => row.type);

async function openInvoice(tenant: ReturnType<typeof newTenant>, amount = 4_200) {
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com' });
  return (await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: BigInt(amount), description: 'Work', status: 'open' })).invoice!;
}

describe('PayInvoice', () => {
  it('pays an open invoice once per payment id, whatever the request id; another payment is refused', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant);
    const payment = paymentId();
    const request = { tenant, id: invoice.id, paymentId: payment, amount: usd(4_200), paidAt: BigInt(Math.floor(Date.now() / 1000)) };
    const { invoice: paid } = await invoicing.client.payInvoice({ ...request, requestId: 'first' });
    expect(paid).toMatchObject({ status: 'paid', amountPaid: usd(4_200), amountDue: usd(0) });
    expect((await invoicing.client.payInvoice({ ...request, requestId: 'second' })).invoice).toEqual(paid);
    expect(await publicTypes(invoice.id)).toEqual(['invoice.created', 'invoice.paid']);
    expect(await grpcFailure(invoicing.client.payInvoice({ ...request, paymentId: paymentId(), requestId: 'third' }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_paid' });
  });

  it('refuses an amount that is not the amount due, and a draft', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant);
    const base = { tenant, id: invoice.id, paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: '' };
    expect(await grpcFailure(invoicing.client.payInvoice({ ...base, paymentId: paymentId(), amount: usd(4_199) }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_mismatch' });
    expect(await grpcFailure(invoicing.client.payInvoice({ ...base, paymentId: paymentId(), amount: { amountMinor: 4_200n, currency: 'eur' } }))).toMatchObject({ errorCode: 'amount_mismatch' });
    const { customer } = await subscription.client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com' });
    const draft = (await invoicing.client.createInvoice({ tenant, customerId: customer!.id, amount: 10n, description: 'Draft' })).invoice!;
    expect(await grpcFailure(invoicing.client.payInvoice({ ...base, id: draft.id, paymentId: paymentId(), amount: usd(10) }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_draft' });
  });
});

describe('RecordRefund', () => {
  it('refuses a credit note of more than is paid and not yet refunded, of nothing or of another currency, issuing nothing; partial credit notes add up to refunded', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant);
    const payment = paymentId();
    await invoicing.client.payInvoice({ tenant, id: invoice.id, paymentId: payment, amount: usd(4_200), paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: '' });
    const refund = (amount: { amountMinor: bigint; currency: string }) =>
      invoicing.client.recordRefund({ tenant, id: invoice.id, creditNoteId: `cn_${randomBytes(12).toString('hex')}`, paymentId: payment, amount, reason: 'requested_by_customer' });
    for (const wrong of [usd(4_201), usd(1_000_000), usd(0), usd(-1), { amountMinor: 4_200n, currency: 'eur' }]) {
      expect(await grpcFailure(refund(wrong))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_mismatch' });
    }
    expect((await invoicing.client.getInvoice({ tenant, id: invoice.id })).invoice).toMatchObject({ status: 'paid', amountPaid: usd(4_200), amountRefunded: usd(0) });
    expect((await invoicing.client.listCreditNotes({ tenant, invoiceId: invoice.id, page: { limit: 10 } })).creditNotes).toEqual([]);

    const { creditNote, invoice: partly } = await refund(usd(4_199));
    expect(creditNote).toMatchObject({ invoiceId: invoice.id, amount: usd(4_199) });
    expect(partly).toMatchObject({ status: 'paid', amountRefunded: usd(4_199) });
    // One cent is left: more is refused, the cent refunds the invoice in full.
    expect(await grpcFailure(refund(usd(2)))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'amount_mismatch' });
    expect((await refund(usd(1))).invoice).toMatchObject({ status: 'refunded', amountRefunded: usd(4_200) });
    expect(await grpcFailure(refund(usd(1)))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_refunded' });
    expect((await invoicing.client.listCreditNotes({ tenant, invoiceId: invoice.id, page: { limit: 10 } })).creditNotes.map((note) => note.amount?.amountMinor)).toEqual([1n, 4_199n]);
  });
});

describe('FailInvoicePayment', () => {
  it('fails an open invoice (invoice.payment_failed) once per payment; a failed invoice can still be paid', async () => {
    const tenant = newTenant();
    const invoice = await openInvoice(tenant);
    const failedPayment = paymentId();
    const fail = { tenant, id: invoice.id, paymentId: failedPayment, failureCode: 'insufficient_funds' };
    expect((await invoicing.client.failInvoicePayment({ ...fail, requestId: 'a' })).invoice).toMatchObject({ status: 'failed' });
    expect((await invoicing.client.failInvoicePayment({ ...fail, requestId: 'b' })).invoice).toMatchObject({ status: 'failed' });
    expect(await grpcFailure(invoicing.client.failInvoicePayment({ ...fail, paymentId: paymentId(), requestId: 'c' }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_failed' });
    await invoicing.client.payInvoice({ tenant, id: invoice.id, paymentId: paymentId(), amount: usd(4_200), paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: '' });
    expect(await publicTypes(invoice.id)).toEqual(['invoice.created', 'invoice.payment_failed', 'invoice.paid']);
  });
});
