import * as grpc from '@grpc/grpc-js';
import type { JsonObject } from '@bufbuild/protobuf';
import { invoicingV1, presentInvoice, type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { catalogue } from '@recur/i18n';
import { decodeInternalEvent, decodePublicEvent } from '@recur/messaging';
import { type MailCatcher, startMailCatcher } from '@recur/local-infra';
import { eventually, grpcFailure, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The invoicing service as its own process on a real PostgreSQL database, with the real
 * subscription service beside it (customers live there), exercised through gRPC only.
 */
// Two fresh processes on a shared 2-core machine: the first calls warm their connections up.
jest.setTimeout(30_000);

let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let customers: ServiceClient<typeof subscriptionV1.SubscriptionService>;
let client: ServiceClient<typeof invoicingV1.InvoicingService>;
/** A real SMTP server in this process: invoicing sends its e-mails here. */
let mailCatcher: MailCatcher;

/** A fresh account per test: numbering and lists start empty. */
const newTenant = (livemode = false) => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode });
type Tenant = ReturnType<typeof newTenant>;
const today = () => new Date().toISOString().slice(0, 10);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const usd = (amount: number) => ({ amountMinor: BigInt(amount), currency: 'usd' });

beforeAll(async () => {
  mailCatcher = await startMailCatcher();
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, {
    SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress,
    PAYMENT_PAGE_URL: 'https://pay.example.test/i/',
    SMTP_URL: mailCatcher.url,
    MAIL_FROM: 'Billing <billing@recur.test>',
  });
  customers = subscription.client;
  client = invoicing.client;
}, 120_000);

afterAll(async () => {
  await invoicing?.stop();
  await subscription?.stop();
  await mailCatcher?.stop();
});

async function newCustomer(tenant: Tenant, name = 'Ada Lovelace', email = 'ada@example.com') {
  return (await customers.createCustomer({ tenant, name, email })).customer!;
}

interface OutboxRow extends Record<string, unknown> {
  topic: string;
  type: string;
  payload: JsonObject;
}
const outbox = (aggregateId: string) =>
  queryDatabase<OutboxRow>(invoicing.databaseUrl, 'SELECT topic, type, payload FROM outbox_events WHERE key = $1 ORDER BY seq', [aggregateId]);
const countRows = async (table: string, accountId: string) =>
  Number((await queryDatabase<{ n: string }>(invoicing.databaseUrl, `SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [accountId]))[0].n);

describe('InvoicingService one-off invoices', () => {
  it('creates a draft (status absent), without a number, and finalizes it to open with the next number', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer.id, amount: 12_345n, description: 'Consulting, March', dueDate: inDays(14) });
    expect(draft).toMatchObject({ status: 'draft', number: '', billingReason: 'manual', currency: 'usd', customerName: 'Ada Lovelace', customerEmail: 'ada@example.com', paymentUrl: '', dueDate: inDays(14) });
    expect(draft!.id).toMatch(/^in_/);
    expect(draft!.lines).toHaveLength(1);
    expect(draft!.lines[0]).toMatchObject({ kind: 'manual', description: 'Consulting, March', quantity: 1n, amount: usd(12_345) });
    expect(draft!.lines[0].id).toMatch(/^il_/);
    expect([draft!.subtotal, draft!.discount, draft!.total, draft!.amountDue, draft!.amountPaid]).toMatchObject([usd(12_345), usd(0), usd(12_345), usd(12_345), usd(0)]);
    // A draft is not raised yet: only the integration event, no invoice.created webhook.
    expect((await outbox(draft!.id)).map((row) => row.type)).toEqual(['recur.invoicing.v1.InvoiceCreated']);

    const { invoice: open } = await client.finalizeInvoice({ tenant, id: draft!.id, requestId: `req_${draft!.id}` });
    expect(open).toMatchObject({ status: 'open', number: 'INV-000001', paymentUrl: expect.stringMatching(/^https:\/\/pay\.example\.test\/i\/[A-Za-z0-9_-]{43}$/) });
    expect(Number(open!.finalizedAt)).toBeGreaterThan(Date.now() / 1000 - 60);
    expect((await client.getInvoice({ tenant, id: draft!.id })).invoice).toEqual(open);

    const rows = await outbox(draft!.id);
    expect(rows.map((row) => [row.topic, row.type])).toEqual([
      ['recur.invoicing.internal', 'recur.invoicing.v1.InvoiceCreated'],
      ['recur.invoicing.internal', 'recur.invoicing.v1.InvoiceFinalized'],
      ['recur.invoicing.public', 'invoice.created'],
    ]);
    const finalized = decodeInternalEvent(JSON.stringify(rows[1].payload));
    expect(finalized.aggregateId).toBe(draft!.id);
    const created = decodePublicEvent(JSON.stringify(rows[2].payload));
    expect(created.data).toEqual({ object: presentInvoice(open!), source: 'manual' });
    expect((created.data as { object: { payment_url: string } }).object.payment_url).toBe(open!.paymentUrl);
  });

  it('gives each finalized invoice its own payment token, and GetInvoiceForPayment answers the invoice with its tenant by it alone', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const raise = async () => (await client.createInvoice({ tenant, customerId: customer.id, amount: 700n, description: 'Fibre', status: 'open' })).invoice!;
    const [first, second] = [await raise(), await raise()];
    const tokenOf = (url: string) => url.slice('https://pay.example.test/i/'.length);
    expect(tokenOf(first.paymentUrl)).not.toBe(tokenOf(second.paymentUrl));

    const found = await client.getInvoiceForPayment({ paymentToken: tokenOf(second.paymentUrl) });
    expect(found.tenant).toMatchObject({ accountId: tenant.accountId, livemode: tenant.livemode });
    expect(found.invoice).toEqual(second);
    // One character off, empty, or the invoice id: no invoice.
    const forged = tokenOf(second.paymentUrl).replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
    for (const paymentToken of [forged, '', second.id]) {
      expect(await grpcFailure(client.getInvoiceForPayment({ paymentToken }))).toEqual({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing', param: 'payment_token' });
    }
  });

  it('creates an invoice open at once from lines, in another currency, with metadata', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice } = await client.createInvoice({
      tenant, customerId: customer.id, currency: 'eur', status: 'open', metadata: { order: '42' },
      lines: [{ description: 'Seats', amount: 5_000n, quantity: 5n }, { description: 'Setup', amount: 1_999n }],
    });
    expect(invoice).toMatchObject({ status: 'open', number: 'INV-000001', currency: 'eur', description: '', metadata: { order: '42' }, dueDate: inDays(30) });
    expect(invoice!.lines.map((line) => [line.description, line.quantity, line.amount!.amountMinor])).toEqual([['Seats', 5n, 5_000n], ['Setup', 1n, 1_999n]]);
    expect(invoice!.total).toMatchObject({ amountMinor: 6_999n, currency: 'eur' });
    expect((await outbox(invoice!.id)).map((row) => row.type)).toEqual(['recur.invoicing.v1.InvoiceCreated', 'recur.invoicing.v1.InvoiceFinalized', 'invoice.created']);
  });

  it('raises a prepaid wallet top-up (billing_reason top_up, said by invoice.created) and takes the wallet debit (wtx_…) as its payment', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 2_500n, description: 'Wallet top-up', status: 'open', billingReason: 'top_up' });
    expect(invoice).toMatchObject({ status: 'open', billingReason: 'top_up' });
    const [created] = await queryDatabase<{ payload: { data: { source: string } } }>(invoicing.databaseUrl, "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'invoice.created'", [invoice!.id]);
    expect(created.payload.data.source).toBe('top_up');
    const paidAt = BigInt(Math.floor(Date.now() / 1000));
    const { invoice: paid } = await client.payInvoice({ tenant, id: invoice!.id, paymentId: 'wtx_0123456789abcdefABCDEFGH', amount: usd(2_500), paidAt });
    expect(paid).toMatchObject({ status: 'paid', billingReason: 'top_up' });
    expect(await grpcFailure(client.payInvoice({ tenant, id: invoice!.id, paymentId: 'cus_notapayment', amount: usd(2_500), paidAt }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'payment_id' });
  });

  it('raises a one_time sales link sale as an open one-off invoice (billing_reason sales_link, said by invoice.created)', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 45_000n, currency: 'usd', description: 'One month of Fibre 50', status: 'open', billingReason: 'sales_link' });
    expect(invoice).toMatchObject({ status: 'open', billingReason: 'sales_link', subscriptionId: '', paymentUrl: expect.stringMatching(/^https:\/\/pay\.example\.test\/i\//) });
    const [created] = await queryDatabase<{ payload: { data: { source: string } } }>(invoicing.databaseUrl, "SELECT payload FROM outbox_events WHERE key = $1 AND type = 'invoice.created'", [invoice!.id]);
    expect(created.payload.data.source).toBe('sales_link');
  });

  it('refuses invalid input with the offending param and stores nothing', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const base = { tenant, customerId: customer.id, amount: 100n, description: 'Fee' };
    const cases: [Partial<typeof base> & Record<string, unknown>, string][] = [
      [{ dueDate: '2026-02-30' }, 'due_date'],
      [{ dueDate: '2026-2-3' }, 'due_date'],
      [{ dueDate: '2000-01-01' }, 'due_date'],
      [{ amount: -1n }, 'amount'],
      [{ amount: 1_000_000_000_000n }, 'amount'],
      [{ currency: 'zzz' }, 'currency'],
      [{ currency: 'USD' }, 'currency'],
      [{ description: '   ' }, 'description'],
      [{ description: undefined }, 'description'],
      [{ status: 'paid' }, 'status'],
      [{ billingReason: 'subscription_cycle' }, 'billing_reason'],
      [{ amount: undefined, lines: [{ description: 'A', amount: 1n }, { description: '', amount: 1n }] }, 'lines[1].description'],
      [{ amount: undefined, lines: [{ description: 'A', amount: -5n }] }, 'lines[0].amount'],
      [{ lines: [{ description: 'A', amount: 1n }] }, 'lines'],
      [{ amount: undefined }, 'amount'],
    ];
    for (const [change, param] of cases) {
      expect([param, await grpcFailure(client.createInvoice({ ...base, ...change } as never))]).toEqual([param, { code: grpc.status.INVALID_ARGUMENT, errorCode: expect.any(String), param }]);
    }
    expect(await countRows('invoices', tenant.accountId)).toBe(0);
    expect(Number((await queryDatabase<{ n: string }>(invoicing.databaseUrl, "SELECT count(*) AS n FROM outbox_events WHERE payload->'tenant'->>'account_id' = $1", [tenant.accountId]))[0].n)).toBe(0);
  });

  it('answers an unknown, other-app or deleted customer with its documented error', async () => {
    const tenant = newTenant();
    const live = await newCustomer({ ...tenant, livemode: true });
    const deleted = await newCustomer(tenant);
    await customers.deleteCustomer({ tenant, id: deleted.id });
    const create = (customerId: string) => client.createInvoice({ tenant, customerId, amount: 100n, description: 'Fee' });
    expect(await grpcFailure(create('cus_doesnotexist'))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'customer' });
    expect(await grpcFailure(create('not-an-id'))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'customer' });
    expect(await grpcFailure(create(live.id))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'resource_missing', param: 'customer' });
    expect(await grpcFailure(create(deleted.id))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'customer_deleted', param: 'customer' });
    expect(await countRows('invoices', tenant.accountId)).toBe(0);
  });

  it('takes the customer as they are at finalization, and refuses to finalize for a customer deleted since', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant, 'Old Name', 'old@example.com');
    const { invoice: first } = await client.createInvoice({ tenant, customerId: customer.id, amount: 100n, description: 'A' });
    const { invoice: second } = await client.createInvoice({ tenant, customerId: customer.id, amount: 100n, description: 'B' });
    await customers.updateCustomer({ tenant, id: customer.id, name: 'New Name', email: 'new@example.com' });
    expect((await client.finalizeInvoice({ tenant, id: first!.id })).invoice).toMatchObject({ customerName: 'New Name', customerEmail: 'new@example.com' });
    await customers.deleteCustomer({ tenant, id: customer.id });
    expect(await grpcFailure(client.finalizeInvoice({ tenant, id: second!.id }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'customer_deleted' });
    expect((await client.getInvoice({ tenant, id: second!.id })).invoice).toMatchObject({ status: 'draft', number: '' });
  });

  it('records address, phone and tax ids at finalization and keeps them when the customer changes after; a draft has none yet', async () => {
    const tenant = newTenant();
    const dakar = { line1: '12 rue Carnot', line2: '', city: 'Dakar', region: '', postalCode: '10200', country: 'SN' };
    const { customer } = await customers.createCustomer({
      tenant, name: 'Awa Diop', email: 'awa@example.sn', preferredLocale: 'fr', phone: '+221771234567', address: { ...dakar, line1: 'Old street 1' },
      taxIds: [{ type: 'sn_ninea', value: '0012345 2G3' }],
    });
    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer!.id, currency: 'xof', amount: 59_000n, description: 'Abonnement' });
    expect(presentInvoice(draft!)).toMatchObject({ customer_address: null, customer_phone: null, customer_tax_ids: null });

    // Changed before finalization: finalization records the customer as they are then.
    await customers.updateCustomer({ tenant, id: customer!.id, address: dakar, taxIds: { taxIds: [{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FR AB 123456789' }] } });
    const { invoice: issued } = await client.finalizeInvoice({ tenant, id: draft!.id });
    const recorded = {
      customer_address: { line1: '12 rue Carnot', line2: null, city: 'Dakar', region: null, postal_code: '10200', country: 'SN' },
      customer_phone: '+221771234567',
      customer_tax_ids: [{ type: 'sn_ninea', value: '0012345 2G3' }, { type: 'eu_vat', value: 'FRAB123456789' }],
    };
    expect(presentInvoice(issued!)).toMatchObject(recorded);

    // Changed after: the issued invoice, its stored row and its PDF keep what finalization recorded.
    await customers.updateCustomer({ tenant, id: customer!.id, name: 'Awa Diop SARL', phone: '', clearAddress: true, taxIds: { taxIds: [] } });
    expect(presentInvoice((await client.getInvoice({ tenant, id: draft!.id })).invoice!)).toMatchObject({ ...recorded, customer_name: 'Awa Diop' });
    const [row] = await queryDatabase<{ customer_details: JsonObject }>(invoicing.databaseUrl, 'SELECT customer_details FROM invoices WHERE id = $1', [draft!.id]);
    expect(row.customer_details).toMatchObject({ phone: '+221771234567', tax_ids: recorded.customer_tax_ids });
    const text = pdfText((await client.renderInvoicePdf({ tenant, id: draft!.id, sellerName: 'Teranga' })).pdf).replace(/[\u00a0\u202f]/g, ' ');
    for (const expected of ['Facturé à', 'Awa Diop', '12 rue Carnot', '10200 Dakar', 'Sénégal', 'Tél. : +221771234567', 'awa@example.sn', 'NINEA : 0012345 2G3', 'TVA intracommunautaire', 'FRAB123456789']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }

    // An invoice finalized now records the customer as changed: no address, phone or tax id.
    const { invoice: later } = await client.createInvoice({ tenant, customerId: customer!.id, currency: 'xof', amount: 1_000n, description: 'Option', status: 'open' });
    expect(presentInvoice(later!)).toMatchObject({ customer_address: null, customer_phone: null, customer_tax_ids: [] });
  });
});

describe('InvoicingService state machine', () => {
  it('voids open and draft invoices once; every forbidden move answers FAILED_PRECONDITION with its code', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice: open } = await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Open one', status: 'open' });
    expect(await grpcFailure(client.finalizeInvoice({ tenant, id: open!.id }))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_not_draft' });

    const { invoice: voided } = await client.voidInvoice({ tenant, id: open!.id });
    expect(voided).toMatchObject({ status: 'void', number: open!.number, amountDue: usd(0), total: usd(500) });
    expect(Number(voided!.voidedAt)).toBeGreaterThan(0);
    expect(await grpcFailure(client.voidInvoice({ tenant, id: open!.id }))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_already_void' });
    expect(await grpcFailure(client.finalizeInvoice({ tenant, id: open!.id }))).toMatchObject({ errorCode: 'invoice_not_draft' });
    const rows = await outbox(open!.id);
    expect(rows.map((row) => row.type)).toEqual(['recur.invoicing.v1.InvoiceCreated', 'recur.invoicing.v1.InvoiceFinalized', 'invoice.created', 'recur.invoicing.v1.InvoiceVoided', 'invoice.voided']);
    expect(decodePublicEvent(JSON.stringify(rows[4].payload)).data).toEqual({ object: presentInvoice(voided!) });

    // A draft voided keeps no number, and the next finalization takes the next one.
    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Draft one' });
    expect((await client.voidInvoice({ tenant, id: draft!.id })).invoice).toMatchObject({ status: 'void', number: '' });
    const { invoice: next } = await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Next', status: 'open' });
    expect(next!.number).toBe('INV-000002');
  });

  it('answers a repeated request id with the first answer, refusal included', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Once', status: 'open' });
    const first = await client.voidInvoice({ tenant, id: invoice!.id, requestId: 'req_void_1' });
    expect(await client.voidInvoice({ tenant, id: invoice!.id, requestId: 'req_void_1' })).toEqual(first);
    expect(await grpcFailure(client.voidInvoice({ tenant, id: invoice!.id, requestId: 'req_void_2' }))).toMatchObject({ errorCode: 'invoice_already_void' });
    expect((await outbox(invoice!.id)).filter((row) => row.type === 'invoice.voided')).toHaveLength(1);
    const results = await Promise.all(Array.from({ length: 5 }, () => client.createInvoice({ tenant, customerId: customer.id, amount: 1n, description: 'x', requestId: 'req_create_1' })));
    expect(new Set(results.map((result) => result.invoice!.id)).size).toBe(1);
  });

  it('keeps tenants apart: another app or account finds nothing', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Mine' });
    for (const other of [{ ...tenant, livemode: true }, newTenant()]) {
      expect(await grpcFailure(client.getInvoice({ tenant: other, id: invoice!.id }))).toEqual({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing', param: 'id' });
      expect(await grpcFailure(client.voidInvoice({ tenant: other, id: invoice!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.finalizeInvoice({ tenant: other, id: invoice!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect((await client.listInvoices({ tenant: other })).invoices).toEqual([]);
    }
  });

  it('lists newest first, paged, filtered by customer, status and subscription', async () => {
    const tenant = newTenant();
    const [ada, bob] = [await newCustomer(tenant), await newCustomer(tenant, 'Bob', 'bob@example.com')];
    const a1 = (await client.createInvoice({ tenant, customerId: ada.id, amount: 1n, description: 'a1' })).invoice!;
    const b1 = (await client.createInvoice({ tenant, customerId: bob.id, amount: 1n, description: 'b1', status: 'open' })).invoice!;
    const a2 = (await client.createInvoice({ tenant, customerId: ada.id, amount: 1n, description: 'a2', status: 'open' })).invoice!;
    const renewal = (await client.createSubscriptionInvoice(renewalRequest(tenant, bob.id, 'sub_list', 1_800_000_000))).invoice!;
    const ids = async (filter: { customerId?: string; status?: string; subscriptionId?: string }) => (await client.listInvoices({ tenant, ...filter })).invoices.map((invoice) => invoice.id);
    expect(await ids({})).toEqual([renewal.id, a2.id, b1.id, a1.id]);
    expect(await ids({ customerId: ada.id })).toEqual([a2.id, a1.id]);
    expect(await ids({ status: 'open' })).toEqual([renewal.id, a2.id, b1.id]);
    expect(await ids({ status: 'draft', customerId: ada.id })).toEqual([a1.id]);
    expect(await ids({ subscriptionId: 'sub_list' })).toEqual([renewal.id]);
    const page = await client.listInvoices({ tenant, page: { limit: 2, offset: 1 } });
    expect([page.invoices.map((invoice) => invoice.id), page.page]).toEqual([[a2.id, b1.id], expect.objectContaining({ total: 4, hasMore: true })]);
    expect(await grpcFailure(client.listInvoices({ tenant, page: { limit: 101 } }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'limit' });
  });
});

interface RenewalLine {
  kind: string;
  description: string;
  quantity: bigint;
  amount: { amountMinor: bigint; currency: string };
  periodStart?: bigint;
  periodEnd?: bigint;
}
interface RenewalRequest {
  tenant: Tenant;
  customerId: string;
  subscriptionId: string;
  periodStart: bigint;
  periodEnd: bigint;
  currency: string;
  billingReason: string;
  dueInDays: number;
  lines: RenewalLine[];
  discount: { amountMinor: bigint; currency: string };
  requestId?: string;
}

/** What the billing clock sends for one period: a plan line with its period, a usage line, a coupon's discount. */
function renewalRequest(tenant: Tenant, customerId: string, subscriptionId: string, periodStart: number, extra: Partial<RenewalRequest> = {}): RenewalRequest {
  const periodEnd = periodStart + 30 * 86_400;
  return {
    tenant, customerId, subscriptionId,
    periodStart: BigInt(periodStart), periodEnd: BigInt(periodEnd),
    currency: 'usd', billingReason: 'subscription_cycle', dueInDays: 7,
    lines: [
      { kind: 'plan', description: 'Team × 3', quantity: 3n, amount: usd(8_700), periodStart: BigInt(periodStart), periodEnd: BigInt(periodEnd) },
      { kind: 'usage', description: 'API calls beyond 1 000', quantity: 250n, amount: usd(250) },
    ],
    discount: usd(895),
    ...extra,
  };
}

describe('InvoicingService.CreateSubscriptionInvoice', () => {
  it('raises the period invoice finalized and numbered; a repeat of the period answers the same invoice', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const request = renewalRequest(tenant, customer.id, 'sub_renew', 1_800_000_000, { requestId: 'req_clock_1' });
    const { invoice } = await client.createSubscriptionInvoice(request);
    expect(invoice).toMatchObject({
      status: 'open', number: 'INV-000001', subscriptionId: 'sub_renew', billingReason: 'subscription_cycle', customerName: 'Ada Lovelace',
      subtotal: usd(8_950), discount: usd(895), total: usd(8_055), amountDue: usd(8_055),
      periodStart: 1_800_000_000n, periodEnd: 1_800_000_000n + 2_592_000n,
      dueDate: new Date((1_800_000_000 + 7 * 86_400) * 1000).toISOString().slice(0, 10),
    });
    expect(invoice!.lines.map((line) => [line.kind, line.quantity, line.amount!.amountMinor, line.periodStart])).toEqual([['plan', 3n, 8_700n, 1_800_000_000n], ['usage', 250n, 250n, 0n]]);
    // The same request id, another request id, several at once: one invoice, one number.
    const repeats = await Promise.all([
      client.createSubscriptionInvoice(request),
      ...Array.from({ length: 4 }, (_, i) => client.createSubscriptionInvoice({ ...request, requestId: `req_clock_retry_${i}`, lines: request.lines.slice(0, 1) })),
    ]);
    for (const repeat of repeats) expect(repeat.invoice).toEqual(invoice);
    expect(await countRows('invoices', tenant.accountId)).toBe(1);
    const created = (await outbox(invoice!.id)).filter((row) => row.type === 'invoice.created');
    expect(created).toHaveLength(1);
    expect(decodePublicEvent(JSON.stringify(created[0].payload)).data).toEqual({ object: presentInvoice(invoice!), source: 'subscription_cycle' });
    // The next period is a new invoice with the next number.
    expect((await client.createSubscriptionInvoice(renewalRequest(tenant, customer.id, 'sub_renew', 1_802_592_000))).invoice!.number).toBe('INV-000002');
  });

  it('refuses lines in another currency, an empty period and a discount above the lines', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const base = renewalRequest(tenant, customer.id, 'sub_bad', 1_800_000_000);
    expect(await grpcFailure(client.createSubscriptionInvoice({ ...base, lines: [{ ...base.lines[0], amount: { amountMinor: 1n, currency: 'eur' } }] }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'lines[0].amount' });
    expect(await grpcFailure(client.createSubscriptionInvoice({ ...base, lines: [] }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'lines' });
    expect(await grpcFailure(client.createSubscriptionInvoice({ ...base, periodEnd: base.periodStart }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'period_end' });
    expect(await grpcFailure(client.createSubscriptionInvoice({ ...base, discount: usd(1_000_000) }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'discount' });
    expect(await grpcFailure(client.createSubscriptionInvoice({ ...base, billingReason: 'manual' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'billing_reason' });
    expect(await countRows('invoices', tenant.accountId)).toBe(0);
  });
});

describe('InvoicingService.CreateSubscriptionInvoices', () => {
  it('raises a batch as single calls would: one invoice per period across batches and single calls, a bad item refused alone', async () => {
    const [tenant, other] = [newTenant(), newTenant()];
    const [ada, bob] = await Promise.all([newCustomer(tenant), newCustomer(other, 'Bob', 'bob@example.com')]);
    const single = (await client.createSubscriptionInvoice(renewalRequest(tenant, ada.id, 'sub_batch_a', 1_800_000_000))).invoice!;
    const batch = [
      renewalRequest(tenant, ada.id, 'sub_batch_a', 1_800_000_000),
      renewalRequest(tenant, ada.id, 'sub_batch_a', 1_802_592_000),
      renewalRequest(other, bob.id, 'sub_batch_b', 1_800_000_000),
      { ...renewalRequest(tenant, ada.id, 'sub_batch_c', 1_800_000_000), lines: [] },
      renewalRequest(tenant, 'cus_missing', 'sub_batch_d', 1_800_000_000),
    ];
    // Two copies of the batch at once (a worker whose lease lapsed, say): each period raised once.
    const [first, second] = await Promise.all([client.createSubscriptionInvoices({ invoices: batch }), client.createSubscriptionInvoices({ invoices: batch })]);
    expect(second.results).toEqual(first.results);
    const [repeat, next, otherTenant, noLines, noCustomer] = first.results;
    expect(repeat.invoice).toEqual(single);
    expect(next.invoice).toMatchObject({ subscriptionId: 'sub_batch_a', number: 'INV-000002', periodStart: 1_802_592_000n, status: 'open' });
    expect(otherTenant.invoice).toMatchObject({ subscriptionId: 'sub_batch_b', number: 'INV-000001', customerName: 'Bob' });
    expect([noLines.invoice, noLines.errorCode, noCustomer.invoice, noCustomer.errorCode]).toEqual([undefined, 'parameter_invalid', undefined, 'resource_missing']);
    expect([await countRows('invoices', tenant.accountId), await countRows('invoices', other.accountId)]).toEqual([2, 1]);
    expect((await outbox(next.invoice!.id)).filter((row) => row.type === 'invoice.created')).toHaveLength(1);
  });
});

describe('InvoicingService.CreateSubscriptionInvoices numbering', () => {
  it('numbers each app\'s invoices of a batch as one gapless range, a subscription\'s periods in period order whatever the request order', async () => {
    const [tenant, other] = [newTenant(), newTenant()];
    const [ada, bob, gone] = await Promise.all([newCustomer(tenant), newCustomer(other, 'Bob', 'bob@example.com'), newCustomer(tenant, 'Gone', 'gone@example.com')]);
    await customers.deleteCustomer({ tenant, id: gone.id });
    const month = 2_592_000;
    const batch = [
      renewalRequest(tenant, ada.id, 'sub_order_x', 1_800_000_000 + 2 * month),
      renewalRequest(other, bob.id, 'sub_order_z', 1_800_000_000),
      renewalRequest(tenant, ada.id, 'sub_order_x', 1_800_000_000),
      renewalRequest(tenant, gone.id, 'sub_order_gone', 1_800_000_000),
      renewalRequest(tenant, ada.id, 'sub_order_x', 1_800_000_000 + month),
    ];
    const { results } = await client.createSubscriptionInvoices({ invoices: batch });
    expect(results.map((result) => [result.invoice?.subscriptionId, result.invoice?.periodStart, result.invoice?.number, result.errorCode || undefined])).toEqual([
      ['sub_order_x', 1_800_000_000n + 2n * BigInt(month), 'INV-000003', undefined],
      ['sub_order_z', 1_800_000_000n, 'INV-000001', undefined],
      ['sub_order_x', 1_800_000_000n, 'INV-000001', undefined],
      [undefined, undefined, undefined, 'customer_deleted'],
      ['sub_order_x', 1_800_000_000n + BigInt(month), 'INV-000002', undefined],
    ]);
    // Every line as sent, each invoice e-mailed once; the refused period took no number.
    expect(results[0].invoice!.lines.map((line) => [line.kind, line.quantity, line.amount!.amountMinor])).toEqual([['plan', 3n, 8_700n], ['usage', 250n, 250n]]);
    expect([await countRows('invoices', tenant.accountId), await countRows('invoice_lines', tenant.accountId), await countRows('invoice_mails', tenant.accountId)]).toEqual([3, 6, 3]);
    expect((await client.createSubscriptionInvoice(renewalRequest(tenant, ada.id, 'sub_order_y', 1_800_000_000))).invoice!.number).toBe('INV-000004');
  });
});

describe('InvoicingService: a subscription\'s final invoice (subscription_final)', () => {
  it('is keyed apart from its period\'s invoice: raised once (single calls, batches, concurrent repeats), numbered after it from the same sequence', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const start = 1_800_000_000;
    const period = renewalRequest(tenant, customer.id, 'sub_final', start);
    const final = {
      ...renewalRequest(tenant, customer.id, 'sub_final', start, { requestId: 'final_invoice:sub_final:1800000000' }),
      periodEnd: BigInt(start + 86_400 * 10),
      billingReason: 'subscription_final',
      lines: period.lines.slice(1),
      discount: usd(0),
    };
    // The period invoice and the final invoice of the same period in one batch, twice at once, then single repeats.
    const [first, second] = await Promise.all([client.createSubscriptionInvoices({ invoices: [final, period] }), client.createSubscriptionInvoices({ invoices: [final, period] })]);
    expect(second.results).toEqual(first.results);
    const [finalInvoice, periodInvoice] = first.results.map((result) => result.invoice!);
    expect(periodInvoice).toMatchObject({ number: 'INV-000001', billingReason: 'subscription_cycle', periodStart: BigInt(start) });
    expect(finalInvoice).toMatchObject({
      number: 'INV-000002', billingReason: 'subscription_final', periodStart: BigInt(start), periodEnd: BigInt(start + 86_400 * 10),
      total: usd(250), dueDate: new Date((start + 86_400 * 10 + 7 * 86_400) * 1000).toISOString().slice(0, 10),
    });
    const repeats = await Promise.all([client.createSubscriptionInvoice(final), client.createSubscriptionInvoice({ ...final, requestId: 'another' }), client.createSubscriptionInvoice(period)]);
    expect(repeats.map(({ invoice }) => invoice!.id)).toEqual([finalInvoice.id, finalInvoice.id, periodInvoice.id]);
    expect(await countRows('invoices', tenant.accountId)).toBe(2);
    expect((await outbox(finalInvoice.id)).filter((row) => row.type === 'invoice.created')).toHaveLength(1);
    // The sequence goes on gapless after both.
    expect((await client.createSubscriptionInvoice(renewalRequest(tenant, customer.id, 'sub_other', start))).invoice!.number).toBe('INV-000003');
  });
});

describe('InvoicingService numbering', () => {
  it('gives 30 concurrent finalizations consecutive numbers, none shared or skipped, even when some roll back', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant);
    const drafts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => client.createInvoice({ tenant, customerId: customer.id, amount: 100n, description: `Draft ${i}`, metadata: i % 3 === 0 ? { fail: 'yes' } : {} })),
    );
    // A fault inside the finalizing transaction, after the number was taken: every third
    // finalization rolls back (a trigger refuses its UPDATE), as a crash mid-commit would.
    const trigger = `fail_${tenant.accountId}`;
    await queryDatabase(invoicing.databaseUrl, `
      CREATE FUNCTION ${trigger}() RETURNS trigger AS $$ BEGIN
        IF NEW.account_id = '${tenant.accountId}' AND NEW.status = 'open' AND NEW.metadata->>'fail' = 'yes' THEN RAISE EXCEPTION 'injected fault'; END IF;
        RETURN NEW; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER ${trigger} BEFORE UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION ${trigger}();`);
    try {
      const outcomes = await Promise.allSettled(drafts.map(({ invoice }) => client.finalizeInvoice({ tenant, id: invoice!.id })));
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(10);
      const numbers = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.invoice!.number] : [])).sort();
      expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
    } finally {
      await queryDatabase(invoicing.databaseUrl, `DROP TRIGGER ${trigger} ON invoices; DROP FUNCTION ${trigger}();`);
    }
    // The rolled-back drafts finalize now and continue the sequence.
    const retried = await Promise.all(drafts.filter((_, i) => i % 3 === 0).map(({ invoice }) => client.finalizeInvoice({ tenant, id: invoice!.id })));
    expect(retried.map(({ invoice }) => invoice!.number).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `INV-${String(i + 21).padStart(6, '0')}`));
    // Another app of the same account numbers on its own.
    const liveCustomer = await newCustomer({ ...tenant, livemode: true });
    expect((await client.createInvoice({ tenant: { ...tenant, livemode: true }, customerId: liveCustomer.id, amount: 1n, description: 'Live', status: 'open' })).invoice!.number).toBe('INV-000001');
  });
});

describe('InvoicingService PDF', () => {
  it('renders seller, customer, number, dates, lines, totals and the payment link, read back with pdftotext', async () => {
    const tenant = newTenant();
    const customer = await newCustomer(tenant, 'Zoë Ünal', 'zoe@example.com');
    const { invoice } = await client.createInvoice({
      tenant, customerId: customer.id, status: 'open', dueDate: inDays(10),
      lines: [{ description: 'Design sprint', amount: 250_000n, quantity: 2n }, { description: 'Hosting', amount: 4_999n }],
    });
    const { pdf, filename } = await client.renderInvoicePdf({ tenant, id: invoice!.id, sellerName: 'Acme Studio' });
    expect(filename).toBe('INV-000001.pdf');
    expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-');
    const text = pdfText(pdf);
    for (const expected of ['Acme Studio', 'Zoë Ünal', 'zoe@example.com', 'INV-000001', today(), inDays(10), 'Design sprint', 'Hosting', '$2,500.00', '$49.99', '$2,549.99', invoice!.paymentUrl]) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    expect(text).not.toMatch(/\b(DRAFT|VOID|PAID)\b/);

    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer.id, currency: 'jpy', amount: 5_000n, description: 'Tea ceremony' });
    const draftPdf = await client.renderInvoicePdf({ tenant, id: draft!.id, sellerName: 'Acme Studio' });
    expect(draftPdf.filename).toBe(`draft-${draft!.id}.pdf`);
    const draftText = pdfText(draftPdf.pdf);
    expect(draftText).toContain('DRAFT');
    expect(draftText).toContain('¥5,000');
    expect(draftText).not.toContain('pay.example.test');
    await client.voidInvoice({ tenant, id: invoice!.id });
    expect(pdfText((await client.renderInvoicePdf({ tenant, id: invoice!.id, sellerName: 'Acme Studio' })).pdf)).toContain('VOID');
  });
});

describe('InvoicingService e-mail', () => {
  /** A recipient of its own per test: the catcher receives every test's mails. */
  const newRecipient = () => `payer-${randomBytes(4).toString('hex')}@example.com`;
  const mailsTo = (address: string) => mailCatcher.messages().filter((mail) => mail.envelope.to.includes(address));
  const mailRows = (invoiceId: string) =>
    queryDatabase<{ send_key: string; status: string; attempt_count: number; last_error: string | null }>(
      invoicing.databaseUrl, 'SELECT send_key, status, attempt_count, last_error FROM invoice_mails WHERE invoice_id = $1 ORDER BY created_at', [invoiceId]);
  /** Waits past the sender's wake-up, so a mail that should not leave has had its chance to. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  it('e-mails an invoice at finalization through SMTP: recipient, subject, the PDF with number and total, the payment link', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Grace Hopper', recipient);
    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer.id, amount: 123_456n, description: 'Compiler audit', sellerName: 'Acme Studio' });
    await settle();
    expect(mailsTo(recipient)).toEqual([]); // a draft is not mailed
    const { invoice } = await client.finalizeInvoice({ tenant, id: draft!.id, sellerName: 'Acme Studio' });

    const [mail] = await eventually(async () => mailsTo(recipient).length > 0 && mailsTo(recipient), 15_000, 'the invoice mail');
    expect(mail.envelope).toEqual({ from: 'billing@recur.test', to: [recipient] });
    expect(mail.parsed.subject).toBe('Invoice INV-000001 from Acme Studio');
    expect(mail.parsed.from!.value).toEqual([{ name: 'Billing', address: 'billing@recur.test' }]);
    expect(mail.parsed.text).toContain(invoice!.paymentUrl);
    expect(mail.parsed.text).toContain('$1,234.56');
    expect(mail.parsed.attachments.map((attachment) => [attachment.filename, attachment.contentType])).toEqual([['INV-000001.pdf', 'application/pdf']]);
    const text = pdfText(mail.parsed.attachments[0].content);
    for (const expected of ['Acme Studio', 'Grace Hopper', 'INV-000001', 'Compiler audit', '$1,234.56', invoice!.paymentUrl]) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    // The sender marks the row sent once the SMTP server answered, which is after the catcher holds the mail.
    const rows = await eventually(async () => {
      const current = await mailRows(invoice!.id);
      return current[0]?.status === 'sent' && current;
    }, 15_000, 'the mail row marked sent');
    expect(rows).toEqual([{ send_key: 'finalized', status: 'sent', attempt_count: 1, last_error: null }]);
    await settle();
    expect(mailsTo(recipient)).toHaveLength(1);
  });

  it('e-mails invoices created open and renewal invoices too', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Ada Lovelace', recipient);
    await client.createInvoice({ tenant, customerId: customer.id, amount: 500n, description: 'Open at once', status: 'open', sellerName: 'Acme Studio' });
    await client.createSubscriptionInvoice(renewalRequest(tenant, customer.id, 'sub_mailed', 1_800_000_000));
    const mails = await eventually(async () => mailsTo(recipient).length >= 2 && mailsTo(recipient), 15_000, 'two mails');
    expect(mails.map((mail) => mail.parsed.subject).sort()).toEqual(['Invoice INV-000001 from Acme Studio', 'Invoice INV-000002']);
    expect(pdfText(mails.find((mail) => mail.parsed.subject === 'Invoice INV-000002')!.parsed.attachments[0].content)).toContain('$80.55');
  });

  it('resends a finalized invoice once per request id, and refuses a draft or a void invoice with its code', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Ada Lovelace', recipient);
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 700n, description: 'Resent', status: 'open', sellerName: 'Acme Studio' });
    await eventually(async () => mailsTo(recipient).length === 1, 15_000, 'the first mail');
    const first = await client.resendInvoice({ tenant, id: invoice!.id, sellerName: 'Acme Studio', requestId: 'req_resend_1' });
    expect(first.invoice).toEqual(invoice);
    expect(first.mailId).toMatch(/^mail_/);
    // A retried command (same request id) queues nothing more.
    expect(await client.resendInvoice({ tenant, id: invoice!.id, sellerName: 'Acme Studio', requestId: 'req_resend_1' })).toEqual(first);
    await eventually(async () => mailsTo(recipient).length === 2, 15_000, 'the resent mail');
    await settle();
    expect(mailsTo(recipient)).toHaveLength(2);
    expect((await mailRows(invoice!.id)).map((row) => [row.send_key, row.status])).toEqual([['finalized', 'sent'], ['resend:req_resend_1', 'sent']]);

    const { invoice: draft } = await client.createInvoice({ tenant, customerId: customer.id, amount: 700n, description: 'Draft' });
    expect(await grpcFailure(client.resendInvoice({ tenant, id: draft!.id, requestId: 'req_resend_draft' }))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_not_finalized' });
    await client.voidInvoice({ tenant, id: invoice!.id });
    expect(await grpcFailure(client.resendInvoice({ tenant, id: invoice!.id, requestId: 'req_resend_void' }))).toEqual({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'invoice_void' });
    expect(await grpcFailure(client.resendInvoice({ tenant: newTenant(), id: invoice!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await mailRows(invoice!.id)).toHaveLength(2);
    expect(await mailRows(draft!.id)).toEqual([]);
  });

  it('keeps a mail while the SMTP server refuses it and sends it once the server recovers', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Ada Lovelace', recipient);
    mailCatcher.refuse(451);
    let invoiceId: string;
    let paymentUrl: string;
    try {
      ({ invoice: { id: invoiceId, paymentUrl } } = (await client.createInvoice({ tenant, customerId: customer.id, amount: 900n, description: 'Outage', status: 'open' })) as { invoice: { id: string; paymentUrl: string } });
      // Two attempts refused (the first at once, the second a second later): the mail waits, pending.
      const [row] = await eventually(async () => {
        const rows = await mailRows(invoiceId);
        return rows[0]?.attempt_count >= 2 && rows;
      }, 15_000, 'two refused attempts');
      expect(row).toMatchObject({ status: 'pending', last_error: expect.stringContaining('451') });
      expect(mailsTo(recipient)).toEqual([]);
    } finally {
      expect(mailCatcher.refuse(null)).toBeGreaterThanOrEqual(2);
    }
    const [mail] = await eventually(async () => mailsTo(recipient).length > 0 && mailsTo(recipient), 20_000, 'the mail after recovery');
    expect(mail.parsed.text).toContain(paymentUrl!);
    expect((await mailRows(invoiceId!))[0]).toMatchObject({ status: 'sent', last_error: null });
  });

  it('cancels a mail still waiting when its invoice is voided', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Ada Lovelace', recipient);
    mailCatcher.refuse(451);
    let invoiceId: string;
    try {
      ({ invoice: { id: invoiceId } } = (await client.createInvoice({ tenant, customerId: customer.id, amount: 900n, description: 'Voided soon', status: 'open' })) as { invoice: { id: string } });
      await eventually(async () => (await mailRows(invoiceId))[0]?.attempt_count >= 1, 15_000, 'a refused attempt');
      await client.voidInvoice({ tenant, id: invoiceId });
    } finally {
      mailCatcher.refuse(null);
    }
    const [row] = await eventually(async () => {
      const rows = await mailRows(invoiceId!);
      return rows[0]?.status !== 'pending' && rows;
    }, 20_000, 'the canceled mail');
    expect(row).toMatchObject({ status: 'canceled' });
    expect(mailsTo(recipient)).toEqual([]);
  });

  it('gives up at once on a recipient the server refuses for good (5xx)', async () => {
    const tenant = newTenant();
    const recipient = newRecipient();
    const customer = await newCustomer(tenant, 'Ada Lovelace', recipient);
    mailCatcher.refuse(550);
    try {
      const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 900n, description: 'Bounce', status: 'open' });
      const [row] = await eventually(async () => {
        const rows = await mailRows(invoice!.id);
        return rows[0]?.status !== 'pending' && rows;
      }, 15_000, 'the refused mail');
      expect(row).toMatchObject({ status: 'failed', attempt_count: 1, last_error: expect.stringContaining('550') });
    } finally {
      mailCatcher.refuse(null);
    }
  });
});

describe('InvoicingService languages (docs/localization.md)', () => {
  /** A PDF's text with French spacing (U+00A0, U+202F) as plain spaces, for readable expectations. */
  const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');
  const englishKeys = Object.keys(catalogue('en')!);
  const rawKeysIn = (text: string) => englishKeys.filter((key) => text.includes(key));

  it("writes the PDF and the e-mail in the customer's preferred_locale: French words, amounts, dates, Autoliquidation, no raw key", async () => {
    const tenant = newTenant();
    const recipient = `awa-${randomBytes(4).toString('hex')}@example.com`;
    await client.updateSellerProfile({ accountId: tenant.accountId, legalName: 'Teranga Services SARL', taxId: 'SN-0042' });
    await client.createTaxRate({ tenant, displayName: 'TVA', ratePpm: 180_000n, inclusive: true, country: 'SN', requestId: 'req_tva_sn' });
    const { customer } = await customers.createCustomer({ tenant, name: 'Awa Ndiaye', email: recipient, preferredLocale: 'fr', address: { line1: '', line2: '', city: 'Dakar', region: '', postalCode: '10200', country: 'SN' } });
    expect(customer!.preferredLocale).toBe('fr');
    const { invoice } = await client.createInvoice({ tenant, customerId: customer!.id, currency: 'xof', amount: 1_180_000n, description: 'Abonnement annuel', status: 'open', dueDate: '2026-12-31', sellerName: 'Teranga' });

    const text = plain(pdfText((await client.renderInvoicePdf({ tenant, id: invoice!.id, sellerName: 'Teranga' })).pdf));
    for (const expected of ['Teranga Services SARL', "N° d'identification fiscale : SN-0042", 'Facturé à', 'Numéro de facture', "Date d'émission", "Date d'échéance",
      '31 décembre 2026', 'Statut', 'à payer', 'Désignation', 'Qté', 'Montant', 'TVA 18 % incluse', 'Total hors taxes', '1 000 000 F CFA', '180 000 F CFA',
      '1 180 000 F CFA', 'Montant dû', 'Payer en ligne']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    expect(text).not.toMatch(/Invoice number|Amount due|Date due|Bill to/);
    expect(rawKeysIn(text)).toEqual([]);

    const [mail] = await eventually(async () => {
      const sent = mailCatcher.messages().filter((message) => message.envelope.to.includes(recipient));
      return sent.length > 0 && sent;
    }, 15_000, 'the French mail');
    expect(mail.parsed.subject).toBe('Facture INV-000001 de Teranga Services SARL');
    expect(plain(mail.parsed.text!)).toContain("Voici la facture INV-000001 de Teranga Services SARL d'un montant de 1 180 000 F CFA, à régler avant le 31 décembre 2026.");
    expect(rawKeysIn(mail.parsed.text!)).toEqual([]);
    expect(plain(pdfText(mail.parsed.attachments[0].content))).toContain('Montant dû');

    // A reverse-charge customer: the French legal wording, no tax.
    const { customer: business } = await customers.createCustomer({ tenant, name: 'Sahel Import SA', email: 'compta@example.com', preferredLocale: 'fr', taxExempt: 'reverse', address: { line1: '', line2: '', city: '', region: '', postalCode: '', country: 'SN' } });
    const { invoice: reverse } = await client.createInvoice({ tenant, customerId: business!.id, currency: 'xof', amount: 50_000n, description: 'Conseil', status: 'open' });
    const reverseText = plain(pdfText((await client.renderInvoicePdf({ tenant, id: reverse!.id, sellerName: 'Teranga' })).pdf));
    expect(reverseText).toContain('Autoliquidation : TVA due par le preneur');
    expect(reverseText).not.toContain('TVA 18 %');
  });

  it("falls back to the account's default_locale, and follows the customer's latest choice", async () => {
    const tenant = newTenant();
    const { profile } = await client.updateSellerProfile({ accountId: tenant.accountId, defaultLocale: 'fr' });
    expect(profile!.defaultLocale).toBe('fr');
    expect(await grpcFailure(client.updateSellerProfile({ accountId: tenant.accountId, defaultLocale: 'de' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'default_locale' });
    const customer = await newCustomer(tenant, 'Moussa Diop', 'moussa@example.com');
    const { invoice } = await client.createInvoice({ tenant, customerId: customer.id, amount: 12_345n, description: 'Hosting', status: 'open' });
    const render = async () => plain(pdfText((await client.renderInvoicePdf({ tenant, id: invoice!.id, sellerName: 'Acme' })).pdf));
    expect(await render()).toMatch(/Montant dû\s+123,45 \$US/);
    await customers.updateCustomer({ tenant, id: customer.id, preferredLocale: 'en' });
    expect(await render()).toMatch(/Amount due\s+\$123\.45/);
    await client.updateSellerProfile({ accountId: tenant.accountId, defaultLocale: '' });
    await customers.updateCustomer({ tenant, id: customer.id, preferredLocale: '' });
    expect(await render()).toMatch(/Amount due\s+\$123\.45/);
  });
});

/** The text of a PDF, as poppler's pdftotext reads it (docs/development.md#what-npm-test-needs: tests need poppler-utils). */
function pdfText(pdf: Uint8Array | Buffer): string {
  const file = join(mkdtempSync(join(tmpdir(), 'recur-pdf-')), 'invoice.pdf');
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
}
