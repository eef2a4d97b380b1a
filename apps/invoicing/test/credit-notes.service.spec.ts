import { invoicingV1, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';

/**
 * Credit notes that move no money (docs/api/credit-notes.md) in the invoicing service as its own
 * process on a real PostgreSQL database, the real subscription service beside it, through gRPC
 * only: IssueCreditNote on open and paid invoices, its numbering, its balance entry, its events,
 * its refusals and its row lock under concurrent requests.
 */
jest.setTimeout(60_000);

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let client: ServiceClient<typeof invoicingV1.InvoicingService>;

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
type Tenant = ReturnType<typeof newTenant>;
const usd = (amount: number) => ({ amountMinor: BigInt(amount), currency: 'usd' });
const minor = (value: { amountMinor: bigint } | undefined) => Number(value!.amountMinor);
const requestId = () => `req_${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, INVOICE_MAIL_ON_FINALIZE: 'false', SMTP_URL: 'smtp://127.0.0.1:9' });
  client = invoicing.client;
}, 120_000);

afterAll(async () => {
  await invoicing?.stop();
  await subscription?.stop();
});

const newCustomer = async (tenant: Tenant) => (await subscription.client.createCustomer({ tenant, name: 'Ada Lovelace', email: 'ada@example.com' })).customer!;
const openInvoice = async (tenant: Tenant, customerId: string, amount: number) =>
  (await client.createInvoice({ tenant, customerId, amount: BigInt(amount), description: 'Consulting', status: 'open' })).invoice!;
async function paidInvoice(tenant: Tenant, customerId: string, amount: number) {
  const invoice = await openInvoice(tenant, customerId, amount);
  return (await client.payInvoice({ tenant, id: invoice.id, paymentId: `pay_${randomBytes(6).toString('hex')}`, amount: usd(amount), paidAt: BigInt(Math.floor(Date.now() / 1000)), requestId: requestId() })).invoice!;
}
const issue = (tenant: Tenant, id: string, fields: { amount?: number; reason?: string; memo?: string; refundsUnderWay?: number; requestId?: string } = {}) => client.issueCreditNote({
  tenant, id, reason: fields.reason ?? 'order_change', memo: fields.memo ?? '', requestId: fields.requestId ?? requestId(),
  ...(fields.amount === undefined ? {} : { amount: BigInt(fields.amount) }), ...(fields.refundsUnderWay === undefined ? {} : { refundsUnderWay: usd(fields.refundsUnderWay) }),
});
const outboxTypes = async (invoiceId: string) =>
  (await queryDatabase<{ type: string }>(invoicing.databaseUrl, `SELECT type FROM outbox_events WHERE payload::text LIKE $1 ORDER BY seq`, [`%${invoiceId}%`])).map((row) => row.type);

describe('IssueCreditNote', () => {
  it('lowers what an open invoice owes, once per request id, and pays it (no payment) when it owes nothing; numbers are gapless', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const invoice = await openInvoice(tenant, customer.id, 10_000);
    const first = await issue(tenant, invoice.id, { amount: 2_500, memo: ' Missing panel ', requestId: 'req_first' });
    expect(first.creditNote).toMatchObject({ number: 'CN-000001', amount: usd(2_500), reason: 'order_change', paymentId: '', creditedTo: 'amount_due', memo: 'Missing panel' });
    expect(first.invoice).toMatchObject({ status: 'open', amountDue: usd(7_500), amountCredited: usd(2_500) });
    // A repeat of the request answers the first answer and credits nothing more.
    expect((await issue(tenant, invoice.id, { amount: 2_500, requestId: 'req_first' })).creditNote!.id).toBe(first.creditNote!.id);
    expect(await grpcFailure(issue(tenant, invoice.id, { amount: 7_501 }))).toMatchObject({ errorCode: 'amount_too_large', param: 'amount' });
    expect(await grpcFailure(issue(tenant, invoice.id, { reason: 'requested_by_customer' }))).toMatchObject({ param: 'reason' });
    expect(await grpcFailure(issue(tenant, invoice.id, { memo: 'x'.repeat(501) }))).toMatchObject({ param: 'memo' });
    const rest = await issue(tenant, invoice.id, { reason: 'product_unsatisfactory' });
    expect(rest.creditNote).toMatchObject({ number: 'CN-000002', amount: usd(7_500) });
    expect(rest.invoice).toMatchObject({ status: 'paid', amountDue: usd(0), amountPaid: usd(0), amountCredited: usd(10_000) });
    expect(await grpcFailure(issue(tenant, invoice.id, {}))).toMatchObject({ errorCode: 'nothing_to_credit' });
    expect(await outboxTypes(invoice.id)).toEqual(expect.arrayContaining(['credit_note.created', 'invoice.paid']));
    expect((await outboxTypes(invoice.id)).filter((type) => type === 'credit_note.created')).toHaveLength(2);
  });

  it('credits a paid invoice to the balance (a credit_note entry), counting refunds under way; a balance in another currency refuses it and keeps the numbers gapless', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const invoice = await paidInvoice(tenant, customer.id, 9_000);
    // 4 000 of refunds are in flight at the provider: 5 000 is left to credit.
    expect(await grpcFailure(issue(tenant, invoice.id, { amount: 5_001, refundsUnderWay: 4_000 }))).toMatchObject({ errorCode: 'amount_too_large' });
    const note = (await issue(tenant, invoice.id, { refundsUnderWay: 4_000, reason: 'duplicate' })).creditNote!;
    expect(note).toMatchObject({ number: 'CN-000001', amount: usd(5_000), creditedTo: 'customer_balance' });
    const { transactions } = await client.listCustomerBalanceTransactions({ tenant, customerId: customer.id, page: { limit: 10 } });
    expect(transactions.map((entry) => [entry.type, minor(entry.amount), minor(entry.endingBalance), entry.invoiceId, entry.creditNoteId])).toEqual([['credit_note', -5_000, -5_000, invoice.id, note.id]]);
    // A refund recorded later never takes what the credit took: 4 000 is left for refunds.
    expect(await grpcFailure(client.recordRefund({ tenant, id: invoice.id, creditNoteId: `cn_${randomBytes(8).toString('hex')}`, paymentId: 'pay_x', amount: usd(4_001), reason: 'duplicate' })))
      .toMatchObject({ errorCode: 'amount_mismatch' });

    const other = await newCustomer(tenant);
    await client.createCustomerBalanceTransaction({ tenant, customerId: other.id, amount: { amountMinor: -100n, currency: 'eur' }, description: '', requestId: requestId() });
    const usdInvoice = await paidInvoice(tenant, other.id, 1_000);
    expect(await grpcFailure(issue(tenant, usdInvoice.id, {}))).toMatchObject({ errorCode: 'balance_currency_mismatch' });
    expect((await client.getInvoice({ tenant, id: usdInvoice.id })).invoice).toMatchObject({ amountCredited: usd(0) });
    // The refused credit gave its number back: the next credit note is CN-000002.
    expect((await issue(tenant, invoice.id, { amount: 1 })).creditNote!.number).toBe('CN-000002');
  });

  it('refuses drafts and void invoices, and issues concurrent credits of one invoice one at a time (never more than the total)', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const draft = (await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Draft' })).invoice!;
    expect(await grpcFailure(issue(tenant, draft.id))).toMatchObject({ errorCode: 'invoice_not_finalized' });
    const voided = await openInvoice(tenant, customer.id, 500);
    await client.voidInvoice({ tenant, id: voided.id, requestId: requestId() });
    expect(await grpcFailure(issue(tenant, voided.id))).toMatchObject({ errorCode: 'invoice_void' });

    const invoice = await paidInvoice(tenant, customer.id, 10_000);
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () => issue(tenant, invoice.id, { amount: 2_000 })));
    expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(5);
    expect((await client.getInvoice({ tenant, id: invoice.id })).invoice).toMatchObject({ amountCredited: usd(10_000) });
    const { creditNotes } = await client.listCreditNotes({ tenant, page: { limit: 20 }, invoiceId: invoice.id });
    expect(creditNotes.map((note) => note.number).sort()).toEqual(['CN-000001', 'CN-000002', 'CN-000003', 'CN-000004', 'CN-000005']);
    expect((await client.getCustomerBalances({ tenant, customerIds: [customer.id] })).balances[0].balance).toMatchObject(usd(-10_000));
  });
});
