import { invoicingV1, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';

/**
 * Customer balances (docs/api/customer-balance.md) in the invoicing service as its own process on
 * a real PostgreSQL database, the real subscription service beside it, through gRPC only.
 */
jest.setTimeout(60_000);

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let client: ServiceClient<typeof invoicingV1.InvoicingService>;

const newTenant = () => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode: false });
type Tenant = ReturnType<typeof newTenant>;
const usd = (amount: number) => ({ amountMinor: BigInt(amount), currency: 'usd' });
const minor = (value: { amountMinor: bigint } | undefined) => Number(value!.amountMinor);

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
const credit = (tenant: Tenant, customerId: string, amount: number, requestId = `req_${randomBytes(6).toString('hex')}`) =>
  client.createCustomerBalanceTransaction({ tenant, customerId, amount: usd(amount), description: 'Goodwill', requestId });
const balanceOf = async (tenant: Tenant, customerId: string) => minor((await client.getCustomerBalances({ tenant, customerIds: [customerId] })).balances[0].balance);
const openInvoice = async (tenant: Tenant, customerId: string, amount: number) =>
  (await client.createInvoice({ tenant, customerId, amount: BigInt(amount), description: 'Consulting', status: 'open' })).invoice!;

describe('customer balance ledger', () => {
  it('keeps tenants apart in concurrent single-customer reads that share a statement', async () => {
    const [mine, theirs] = [newTenant(), newTenant()];
    const [myCustomer, theirCustomer] = [await newCustomer(mine), await newCustomer(theirs)];
    await credit(mine, myCustomer.id, -700);
    await credit(theirs, theirCustomer.id, -300);
    const reads = await Promise.all(
      Array.from({ length: 8 }, () => [balanceOf(mine, myCustomer.id), balanceOf(theirs, myCustomer.id), balanceOf(theirs, theirCustomer.id), balanceOf({ ...mine, livemode: true }, myCustomer.id)]).flat(),
    );
    expect(reads).toEqual(Array.from({ length: 8 }, () => [-700, 0, -300, 0]).flat());
  });

  it('records manual adjustments, newest first, and keeps one currency and credit only', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    expect((await client.getCustomerBalances({ tenant, customerIds: [customer.id] })).balances[0].balance).toMatchObject({ amountMinor: 0n, currency: '' });
    const first = (await credit(tenant, customer.id, -5_000, 'req_first')).transaction!;
    expect(first).toMatchObject({ type: 'adjustment', amount: usd(-5_000), endingBalance: usd(-5_000), description: 'Goodwill', customerId: customer.id });
    expect(first.id).toMatch(/^cbtx_/);
    // A repeat of the same request answers the first answer and moves nothing.
    expect((await credit(tenant, customer.id, -5_000, 'req_first')).transaction!.id).toBe(first.id);
    const second = (await credit(tenant, customer.id, 1_500)).transaction!;
    expect(second.endingBalance).toMatchObject(usd(-3_500));
    expect(await balanceOf(tenant, customer.id)).toBe(-3_500);
    // Taking back more than the credit would leave the customer owing: refused, nothing moved.
    expect(await grpcFailure(credit(tenant, customer.id, 3_501))).toMatchObject({ errorCode: 'amount_too_large', param: 'amount' });
    expect(await grpcFailure(client.createCustomerBalanceTransaction({ tenant, customerId: customer.id, amount: { amountMinor: -1n, currency: 'eur' }, requestId: 'req_eur' })))
      .toMatchObject({ errorCode: 'currency_mismatch', param: 'currency' });
    expect(await grpcFailure(credit(tenant, 'cus_missing', -1))).toMatchObject({ errorCode: 'resource_missing', param: 'customer' });
    const { transactions, page } = await client.listCustomerBalanceTransactions({ tenant, customerId: customer.id, page: { limit: 10 } });
    expect(transactions.map((entry) => entry.id)).toEqual([second.id, first.id]);
    expect(page!.total).toBe(2);
    expect(await balanceOf(tenant, customer.id)).toBe(-3_500);
  });

  it('lets the next finalized invoice consume credit: amount_due is what is left, and a fully covered invoice is paid at once', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    await credit(tenant, customer.id, -5_000);
    const covered = await openInvoice(tenant, customer.id, 1_200);
    expect(covered).toMatchObject({ status: 'paid', total: usd(1_200), amountDue: usd(0), amountPaid: usd(0), startingBalance: usd(-5_000), endingBalance: usd(-3_800) });
    const partly = await openInvoice(tenant, customer.id, 10_000);
    expect(partly).toMatchObject({ status: 'open', total: usd(10_000), amountDue: usd(6_200), startingBalance: usd(-3_800), endingBalance: usd(0) });
    const after = await openInvoice(tenant, customer.id, 700);
    expect(after).toMatchObject({ status: 'open', amountDue: usd(700), startingBalance: usd(0), endingBalance: usd(0) });
    expect(await balanceOf(tenant, customer.id)).toBe(0);
    const { transactions } = await client.listCustomerBalanceTransactions({ tenant, customerId: customer.id, page: { limit: 10 } });
    expect(transactions.map((entry) => [entry.type, minor(entry.amount), minor(entry.endingBalance), entry.invoiceId])).toEqual([
      ['applied_to_invoice', 3_800, 0, partly.id],
      ['applied_to_invoice', 1_200, -3_800, covered.id],
      ['adjustment', -5_000, -5_000, ''],
    ]);
  });

  it('never lets concurrent finalizations consume the same credit (real PostgreSQL, 12 at once)', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    await credit(tenant, customer.id, -1_000);
    const drafts = await Promise.all(Array.from({ length: 12 }, () => client.createInvoice({ tenant, customerId: customer.id, amount: 300n, description: 'Seat' })));
    const finalized = await Promise.all(drafts.map(({ invoice }) => client.finalizeInvoice({ tenant, id: invoice!.id })));
    const applied = finalized.map(({ invoice }) => minor(invoice!.endingBalance) - minor(invoice!.startingBalance));
    // 1 000 of credit over 300-unit invoices: three covered, one for 100, the rest untouched.
    expect(applied.reduce((a, b) => a + b, 0)).toBe(1_000);
    expect([...applied].sort((a, b) => b - a)).toEqual([300, 300, 300, 100, 0, 0, 0, 0, 0, 0, 0, 0]);
    for (const { invoice } of finalized) expect(minor(invoice!.amountDue) + minor(invoice!.endingBalance) - minor(invoice!.startingBalance)).toBe(300);
    expect(finalized.filter(({ invoice }) => invoice!.status === 'paid')).toHaveLength(3);
    expect(await balanceOf(tenant, customer.id)).toBe(0);
    // Balance in = balance out: the ledger sums to the balance, and each entry starts where the one before ended.
    const rows = await queryDatabase<{ amount: string; ending_balance: string }>(invoicing.databaseUrl,
      'SELECT amount, ending_balance FROM customer_balance_transactions WHERE account_id = $1 ORDER BY ending_balance ASC', [tenant.accountId]);
    expect(rows.reduce((sum, row) => sum + Number(row.amount), 0)).toBe(0);
    expect(rows.map((row) => Number(row.ending_balance))).toEqual([-1_000, -700, -400, -100, 0]);
  });

  it('lets a manual adjustment racing finalizations neither lose nor double credit', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    await credit(tenant, customer.id, -600);
    const drafts = await Promise.all(Array.from({ length: 6 }, () => client.createInvoice({ tenant, customerId: customer.id, amount: 250n, description: 'Seat' })));
    const [finalized] = await Promise.all([
      Promise.all(drafts.map(({ invoice }) => client.finalizeInvoice({ tenant, id: invoice!.id }))),
      credit(tenant, customer.id, -900),
    ]);
    const applied = finalized.reduce((sum, { invoice }) => sum + minor(invoice!.endingBalance) - minor(invoice!.startingBalance), 0);
    expect(applied + -(await balanceOf(tenant, customer.id))).toBe(1_500);
  });

  it('has renewal batches consume each customer\'s credit in period order', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    await credit(tenant, customer.id, -1_500);
    const renewal = (periodStart: number) => ({
      tenant, customerId: customer.id, subscriptionId: 'sub_balance', periodStart: BigInt(periodStart), periodEnd: BigInt(periodStart + 2_592_000),
      currency: 'usd', billingReason: 'subscription_cycle', dueInDays: 7, lines: [{ kind: 'plan', description: 'Team', quantity: 1n, amount: usd(1_000) }],
    });
    const { results } = await client.createSubscriptionInvoices({ invoices: [renewal(1_802_592_000), renewal(1_800_000_000)] });
    const [later, earlier] = results.map((result) => result.invoice!);
    expect(earlier).toMatchObject({ status: 'paid', amountDue: usd(0), startingBalance: usd(-1_500), endingBalance: usd(-500) });
    expect(later).toMatchObject({ status: 'open', amountDue: usd(500), startingBalance: usd(-500), endingBalance: usd(0) });
    expect(await balanceOf(tenant, customer.id)).toBe(0);
  });

  it('turns a negative final invoice into credit (no balance before), which a later period of the same batch consumes; other invoices never go negative', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const invoiceOf = (subscriptionId: string, periodStart: number, billingReason: string, amount: number) => ({
      tenant, customerId: customer.id, subscriptionId, periodStart: BigInt(periodStart), periodEnd: BigInt(periodStart + 864_000),
      currency: 'usd', billingReason, dueInDays: 0, lines: [{ kind: 'proration', description: 'Unused time on Team after 2027-01-11', quantity: 1n, amount: usd(amount) }],
    });
    const { results } = await client.createSubscriptionInvoices({ invoices: [
      invoiceOf('sub_next', 1_800_000_000, 'subscription_cycle', 1_500),
      invoiceOf('sub_ended', 1_799_000_000, 'subscription_final', -2_000),
      invoiceOf('sub_refused', 1_799_500_000, 'subscription_cycle', -10),
    ] });
    const [next, final, refused] = results;
    expect(final.invoice).toMatchObject({ status: 'paid', total: usd(-2_000), amountDue: usd(0), amountPaid: usd(0), startingBalance: usd(0), endingBalance: usd(-2_000) });
    expect(next.invoice).toMatchObject({ status: 'paid', amountDue: usd(0), startingBalance: usd(-2_000), endingBalance: usd(-500) });
    expect(refused).toMatchObject({ errorCode: 'parameter_invalid', errorMessage: 'an invoice total must not be negative' });
    expect(await balanceOf(tenant, customer.id)).toBe(-500);
    const { transactions } = await client.listCustomerBalanceTransactions({ tenant, customerId: customer.id, page: { limit: 10 } });
    // One batch writes both at the same instant: the ledger's order between them is not defined, the ending balances are.
    expect(transactions.map((entry) => [entry.type, minor(entry.amount), minor(entry.endingBalance), entry.invoiceId]).sort((x, y) => Number(x[2]) - Number(y[2]))).toEqual([
      ['applied_to_invoice', -2_000, -2_000, final.invoice!.id],
      ['applied_to_invoice', 1_500, -500, next.invoice!.id],
    ]);
  });
});

describe('tax carried back by refunds\' credit notes', () => {
  it('gives back a taxed invoice\'s tax in proportion, per rate, and exactly all of it over partial refunds', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const vat = (await client.createTaxRate({ tenant, displayName: 'VAT', ratePpm: 160_000n, inclusive: false, requestId: 'req_vat' })).taxRate!;
    const levy = (await client.createTaxRate({ tenant, displayName: 'Levy', ratePpm: 180_000n, inclusive: true, requestId: 'req_levy' })).taxRate!;
    const invoice = (await client.createInvoice({
      tenant, customerId: customer.id, currency: 'usd', status: 'open', lines: [
        { description: 'Hosting', amount: 10_000n, quantity: 1n, taxRateIds: [vat.id] },
        { description: 'Support', amount: 5_900n, quantity: 1n, taxRateIds: [levy.id] },
      ],
    })).invoice!;
    // 10 000 + 16 % = 11 600; 5 900 with 18 % inside = 5 000 net + 900 tax: total 17 500, tax 2 500.
    expect([minor(invoice.total), minor(invoice.tax)]).toEqual([17_500, 2_500]);
    await client.payInvoice({ tenant, id: invoice.id, paymentId: 'pay_tax_1', amount: usd(17_500), paidAt: 1_800_000_000n, requestId: 'req_pay_tax' });
    const refund = async (amount: number, n: number) => (await client.recordRefund({ tenant, id: invoice.id, creditNoteId: `cn_tax${n}`, paymentId: 'pay_tax_1', amount: usd(amount), reason: 'requested_by_customer' })).creditNote!;
    const notes = [await refund(5_000, 1), await refund(3_333, 2), await refund(9_167, 3)];
    const perRate = (rateId: string) => notes.map((note) => minor(note.taxAmounts.find((tax) => tax.taxRateId === rateId)?.amount));
    // VAT 1 600 × 5 000 / 17 500 = 457.14 → 457; then 1 600 × 8 333 / 17 500 = 761.87 → 762, less 457 = 305; the rest 838.
    expect(perRate(vat.id)).toEqual([457, 305, 838]);
    expect(perRate(vat.id).reduce((a, b) => a + b, 0)).toBe(1_600);
    expect(perRate(levy.id).reduce((a, b) => a + b, 0)).toBe(900);
    expect(notes.map((note) => minor(note.tax))).toEqual(notes.map((note) => note.taxAmounts.reduce((sum, tax) => sum + minor(tax.amount), 0)));
    // The credit note as read back keeps its tax.
    expect((await client.getCreditNote({ tenant, id: 'cn_tax2' })).creditNote!.taxAmounts.map((tax) => minor(tax.amount))).toEqual(notes[1].taxAmounts.map((tax) => minor(tax.amount)));
  });
});

describe("refunding a final invoice's credit (docs/api/subscriptions.md#refunding-the-credit)", () => {
  const PERIOD_START = 1_893_456_000n; // 2030-01-01
  const DAY = 86_400n;
  const subscriptionInvoice = (tenant: Tenant, customerId: string, subscriptionId: string, fields: { billingReason: string; amount: number; kind: string; refundCredit?: boolean; periodEnd?: bigint }) =>
    client.createSubscriptionInvoice({
      tenant, subscriptionId, customerId, periodStart: PERIOD_START, periodEnd: fields.periodEnd ?? PERIOD_START + 31n * DAY, currency: 'usd', billingReason: fields.billingReason, dueInDays: 0,
      lines: [{ kind: fields.kind, description: fields.kind === 'plan' ? 'Pro' : 'Unused time on Pro', quantity: 1n, amount: usd(fields.amount) }], refundCredit: fields.refundCredit ?? false, requestId: '',
    }).then((answer) => answer.invoice!);
  /** A customer with a period invoice of 10 000 and its final invoice crediting 6 000 (to refund, or not). */
  async function creditToRefund(tenant: Tenant, refundCredit = true) {
    const customer = await newCustomer(tenant);
    const subscriptionId = `sub_${randomBytes(8).toString('hex')}`;
    const period = await subscriptionInvoice(tenant, customer.id, subscriptionId, { billingReason: 'subscription_create', amount: 10_000, kind: 'plan' });
    const final = await subscriptionInvoice(tenant, customer.id, subscriptionId, { billingReason: 'subscription_final', amount: -6_000, kind: 'proration', refundCredit, periodEnd: PERIOD_START + 10n * DAY });
    return { customer, period, final };
  }
  const ledgerOf = async (tenant: Tenant, customerId: string) =>
    (await client.listCustomerBalanceTransactions({ tenant, customerId, page: { limit: 20 } })).transactions.map((entry) => [entry.type, minor(entry.amount), minor(entry.endingBalance), entry.invoiceId]);
  const reserve = (tenant: Tenant, invoiceId: string, max: number) => client.reserveCreditRefund({ tenant, invoiceId, maxAmount: usd(max) }).then((answer) => minor(answer.reserved));
  const settle = (tenant: Tenant, invoiceId: string, refunded: number) => client.settleCreditRefund({ tenant, invoiceId, refunded: usd(refunded) }).then((answer) => minor(answer.returned));

  it('names the period invoice, reserves the credit once whatever is asked again, and gives back what a failed refund did not pay, once', async () => {
    const tenant = newTenant();
    const { customer, period, final } = await creditToRefund(tenant);
    expect(final).toMatchObject({ status: 'paid', total: usd(-6_000), creditRefundInvoiceId: period.id });
    expect(period.creditRefundInvoiceId).toBe('');
    expect(await balanceOf(tenant, customer.id)).toBe(-6_000);

    expect(await reserve(tenant, final.id, 10_000)).toBe(6_000);
    expect(await balanceOf(tenant, customer.id)).toBe(0);
    // A repeat (a redelivered event after a crash) answers the first reservation and takes nothing more.
    expect(await reserve(tenant, final.id, 1)).toBe(6_000);
    expect(await Promise.all([reserve(tenant, final.id, 6_000), reserve(tenant, final.id, 6_000)])).toEqual([6_000, 6_000]);
    expect(await ledgerOf(tenant, customer.id)).toEqual([['refund', 6_000, 0, final.id], ['applied_to_invoice', -6_000, -6_000, final.id]]);

    // The refund went through: nothing comes back. Then it failed after all: all of it comes back, once.
    expect(await settle(tenant, final.id, 6_000)).toBe(0);
    expect(await Promise.all([settle(tenant, final.id, 0), settle(tenant, final.id, 0)])).toEqual([6_000, 6_000]);
    expect(await settle(tenant, final.id, 0)).toBe(6_000);
    expect(await balanceOf(tenant, customer.id)).toBe(-6_000);
    expect((await ledgerOf(tenant, customer.id))[0]).toEqual(['refund_reversal', -6_000, -6_000, final.id]);
    expect(await ledgerOf(tenant, customer.id)).toHaveLength(3);
  });

  it('reserves no more than the balance still holds, nor than the refund can pay; a partial refund gives the rest back', async () => {
    const tenant = newTenant();
    const consumed = await creditToRefund(tenant);
    // An invoice finalized in between consumed 4 000 of the credit: only 2 000 is left to refund.
    await openInvoice(tenant, consumed.customer.id, 4_000);
    expect(await reserve(tenant, consumed.final.id, 10_000)).toBe(2_000);
    expect(await balanceOf(tenant, consumed.customer.id)).toBe(0);

    const capped = await creditToRefund(tenant);
    expect(await reserve(tenant, capped.final.id, 3_500)).toBe(3_500);
    expect(await balanceOf(tenant, capped.customer.id)).toBe(-2_500);
    expect(await settle(tenant, capped.final.id, 1_000)).toBe(2_500);
    expect(await balanceOf(tenant, capped.customer.id)).toBe(-5_000);
    expect(await settle(tenant, capped.final.id, 0)).toBe(3_500);
    expect(await balanceOf(tenant, capped.customer.id)).toBe(-6_000);
  });

  it('refuses an invoice that holds no credit to refund, and reserves nothing', async () => {
    const tenant = newTenant();
    const kept = await creditToRefund(tenant, false);
    expect(kept.final.creditRefundInvoiceId).toBe('');
    expect(await grpcFailure(reserve(tenant, kept.final.id, 6_000))).toMatchObject({ errorCode: 'invoice_credit_not_refundable' });
    expect(await grpcFailure(reserve(tenant, kept.period.id, 6_000))).toMatchObject({ errorCode: 'invoice_credit_not_refundable' });
    expect(await settle(tenant, kept.final.id, 0)).toBe(0);
    expect(await balanceOf(tenant, kept.customer.id)).toBe(-6_000);
  });
});
