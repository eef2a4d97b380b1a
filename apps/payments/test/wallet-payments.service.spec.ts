import { randomBytes } from 'node:crypto';
import { invoicingV1, paymentsV1, subscriptionV1 } from '@recur/contracts';
import { connectDatabase, eventually, grpcFailure, NO_INVOICE_MAIL, queryDatabase, startServiceUnderTest, type ServiceUnderTest } from '@recur/testing';
import { PrismaService } from '../src/infrastructure/prisma.service';
import { providerPaymentIdFor } from '../src/payments/payment';
import type { Wallet } from '../src/wallets/wallet';
import { WalletInvoicing } from '../src/wallets/wallet-invoicing.client';
import { PaymentsRepository } from '../src/payments/payments.repository';
import { ProviderDirectory } from '../src/providers/provider-directory.service';
import { SandboxAdapter } from '../src/providers/sandbox.adapter';
import { WalletsRepository } from '../src/wallets/wallets.repository';
import { WalletsService } from '../src/wallets/wallets.service';
import { FakePawapay } from './fake-pawapay';

/**
 * Wallets meeting money from outside: a live wallet's auto recharge as a pawaPay deposit pushed
 * to the stored phone, and the refund of an invoice a wallet paid. The payments, invoicing and
 * subscription services run as their own processes on a real PostgreSQL, pawaPay is the local
 * stand-in; the balance changes that invoicing's events would cause (Kafka is not part of this
 * test) are applied through the service's own WalletsService on the payments database, as its
 * consumer does.
 */
jest.setTimeout(90_000);

const CALLBACK_URL = 'https://recur.example.test/callbacks/pawapay';
const ZAMBIAN = '+260971234567';
let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let invoicing: ServiceUnderTest<typeof invoicingV1.InvoicingService>;
let payments: ServiceUnderTest<typeof paymentsV1.PaymentsService>;
let prisma: PrismaService;
let walletInvoicing: WalletInvoicing;
let wallets: WalletsService;
const pawapay = new FakePawapay(`pawapay-token-${randomBytes(8).toString('hex')}`);

beforeAll(async () => {
  await pawapay.start();
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  invoicing = await startServiceUnderTest('invoicing', invoicingV1.InvoicingService, { SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, ...NO_INVOICE_MAIL });
  payments = await startServiceUnderTest('payments', paymentsV1.PaymentsService, {
    INVOICING_GRPC_ADDR: invoicing.grpcAddress,
    PAWAPAY_BASE_URL: pawapay.baseUrl,
    PAWAPAY_API_TOKEN: pawapay.token,
    PAWAPAY_CALLBACK_PUBLIC_KEY: pawapay.publicKeyPem,
    PAYMENT_STATUS_CHECK_AFTER_MS: '400',
  });
  prisma = new PrismaService(payments.databaseUrl);
  walletInvoicing = new WalletInvoicing({ invoicingGrpcAddr: invoicing.grpcAddress } as never);
  wallets = new WalletsService(new WalletsRepository(prisma), walletInvoicing, prisma, new PaymentsRepository(prisma), new ProviderDirectory(new SandboxAdapter('http://127.0.0.1:9'), () => new Date()), () => new Date());
}, 120_000);

afterAll(async () => {
  walletInvoicing?.onModuleDestroy();
  await prisma?.$disconnect();
  await payments?.stop();
  await invoicing?.stop();
  await subscription?.stop();
  await pawapay.stop();
});

const newTenant = (livemode: boolean) => ({ accountId: `acct_${randomBytes(6).toString('hex')}`, livemode });
type Tenant = ReturnType<typeof newTenant>;
const invoiceOf = async (tenant: Tenant, id: string) => (await invoicing.client.getInvoice({ tenant, id })).invoice!;
const outboxTypes = async (databaseUrl: string, key: string) =>
  (await queryDatabase<{ type: string }>(databaseUrl, 'SELECT type FROM outbox_events WHERE key = $1 ORDER BY seq', [key])).map((row) => row.type);
const ledgerOf = (walletId: string) =>
  queryDatabase<{ kind: string; amount: string; balance_after: string; key: string }>(payments.databaseUrl,
    'SELECT kind, amount::text, balance_after::text, key FROM wallet_transactions WHERE wallet_id = $1 ORDER BY created_at, id', [walletId]);

/** A customer's wallet in zmw, with `settings`, holding `balance` (a top-up credit, as a paid top-up invoice gives). */
async function walletOf(tenant: Tenant, balance: number, settings: { autoRecharge?: Wallet['autoRecharge'] } = {}): Promise<Wallet> {
  const { customer } = await subscription.client.createCustomer({ tenant, name: 'Mwila Banda', email: 'mwila@example.com' });
  const created = await wallets.transaction((tx) => wallets.create(tx, tenant, { customerId: customer!.id, currency: 'zmw', lowBalanceThreshold: 0 }));
  const updated = await wallets.transaction((tx) => wallets.update(tx, tenant, created.id, settings));
  if (balance === 0) return updated;
  return wallets.transaction(async (tx) => (await wallets.applyEntry(tx, await new WalletsRepository(prisma).getForUpdate(tx, tenant, created.id), { kind: 'top_up', amount: balance, key: `test:${created.id}` })).wallet);
}

/** What payments' consumer does with InvoiceFinalized of an invoice the wallet covers: invoicing marks it paid by the debit. */
async function payFromWallet(wallet: Wallet, amount: number) {
  const { invoice } = await invoicing.client.createInvoice({ tenant: wallet.tenant, customerId: wallet.customerId, amount: BigInt(amount), currency: 'zmw', description: 'Water, March', status: 'open' });
  const outcome = await wallets.transaction((tx) => wallets.payInvoice(tx, wallet.tenant, { id: invoice!.id, customerId: wallet.customerId, currency: 'zmw', amountDue: amount }));
  expect(outcome).toBe('paid');
  return invoiceOf(wallet.tenant, invoice!.id);
}

describe('live auto recharge: a pawaPay deposit pushed to the stored phone', () => {
  it('asks pawaPay once for one deposit (POST /v2/deposits) even when its answer is lost and the worker tries again; callbacks racing the status check settle it once', async () => {
    const tenant = newTenant(true);
    const wallet = await walletOf(tenant, 1_500, { autoRecharge: { enabled: true, threshold: 1_000, amount: 3_000, phoneNumber: ZAMBIAN, provider: 'MTN_MOMO_ZMB' } });
    // pawaPay accepts the first deposit request but its answer never arrives: the worker cannot know, and tries again.
    pawapay.dropDepositAnswers = 1;
    await payFromWallet(wallet, 1_000); // 1500 → 500 crosses 1000: an automatic top-up is requested

    const topUp = await eventually(async () => {
      const [row] = await queryDatabase<{ id: string; status: string; invoice_id: string; payment_id: string }>(payments.databaseUrl,
        'SELECT id, status, invoice_id, payment_id FROM wallet_top_ups WHERE wallet_id = $1 AND automatic', [wallet.id]);
      return row?.status === 'pending' ? row : undefined;
    }, 30_000, 'the automatic top-up started');
    const depositId = providerPaymentIdFor(topUp.id);
    const depositRequests = pawapay.requests.filter((request) => request.path === '/v2/deposits' && request.body?.depositId === depositId);
    expect(depositRequests).toHaveLength(2);
    expect(depositRequests[0].body).toMatchObject({
      depositId, amount: '30.00', currency: 'ZMW', payer: { type: 'MMO', accountDetails: { phoneNumber: '260971234567', provider: 'MTN_MOMO_ZMB' } }, clientReferenceId: topUp.invoice_id,
    });
    // Every deposit request of this test named that one deposit: the retry was pawaPay's DUPLICATE_IGNORED, not a second charge.
    expect(pawapay.requests.filter((request) => request.path === '/v2/deposits').every((request) => request.body?.depositId === depositId)).toBe(true);
    expect(pawapay.requests.some((request) => request.path === '/v2/paymentpage')).toBe(false);
    const paymentRows = await queryDatabase<{ id: string; status: string; provider_payment_id: string }>(payments.databaseUrl,
      'SELECT id, status, provider_payment_id FROM payments WHERE invoice_id = $1', [topUp.invoice_id]);
    expect(paymentRows).toEqual([{ id: topUp.payment_id, status: 'pending', provider_payment_id: depositId }]);
    expect(await outboxTypes(payments.databaseUrl, wallet.id)).toEqual(['wallet.auto_recharge']);

    // The payer approves on the phone. Eight signed callbacks and the janitor's status check reach the payment at once.
    pawapay.finish(depositId, 'COMPLETED');
    await queryDatabase(payments.databaseUrl, "UPDATE payments SET due_at = now() + interval '900 milliseconds', lease_until = NULL WHERE id = $1", [topUp.payment_id]);
    const holder = await connectDatabase(payments.databaseUrl);
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [topUp.payment_id]);
    const racing = Promise.all(Array.from({ length: 8 }, () => payments.client.handleProviderCallback({ provider: 'pawapay', ...pawapay.callback(CALLBACK_URL, depositId) })));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await holder.query('COMMIT');
    await holder.end();
    const outcomes = await racing;
    expect(outcomes.filter((outcome) => outcome.outcome === 'settled').length).toBeLessThanOrEqual(1);
    await eventually(async () => (await invoiceOf(tenant, topUp.invoice_id)).status === 'paid', 15_000, 'the top-up invoice paid');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await outboxTypes(payments.databaseUrl, topUp.payment_id)).toEqual(['recur.payments.v1.PaymentSucceeded']);
    expect((await outboxTypes(invoicing.databaseUrl, topUp.invoice_id)).filter((type) => type === 'invoice.paid')).toHaveLength(1);
    expect(await invoiceOf(tenant, topUp.invoice_id)).toMatchObject({ billingReason: 'top_up', status: 'paid' });
  });
});

describe('refunds of an invoice a wallet paid', () => {
  it('credit the wallet back at once (refund:<cn_…>), number a credit note, and refund the invoice; pawaPay is never called, a second refund is refused', async () => {
    const tenant = newTenant(true);
    const wallet = await walletOf(tenant, 5_000);
    const paid = await payFromWallet(wallet, 1_200);
    const [debit] = await queryDatabase<{ id: string }>(payments.databaseUrl, "SELECT id FROM wallet_transactions WHERE wallet_id = $1 AND kind = 'invoice_payment'", [wallet.id]);
    expect(debit.id).toMatch(/^wtx_/);
    const before = pawapay.requests.length;

    const requestId = `req_${randomBytes(6).toString('hex')}`;
    const { creditNote, refund } = await payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'requested_by_customer', requestId });
    expect(refund).toMatchObject({ status: 'succeeded', invoiceId: paid.id, paymentId: debit.id, amount: { amountMinor: 1_200n, currency: 'zmw' } });
    expect(creditNote).toMatchObject({ id: refund!.id, number: 'CN-000001', invoiceId: paid.id, paymentId: debit.id, amount: { amountMinor: 1_200n, currency: 'zmw' }, reason: 'requested_by_customer' });
    expect(await ledgerOf(wallet.id)).toEqual([
      { kind: 'top_up', amount: '5000', balance_after: '5000', key: `test:${wallet.id}` },
      { kind: 'invoice_payment', amount: '-1200', balance_after: '3800', key: `invoice:${paid.id}` },
      { kind: 'refund', amount: '1200', balance_after: '5000', key: `refund:${refund!.id}` },
    ]);
    expect(await wallets.get(tenant, wallet.id)).toMatchObject({ balance: 5_000 });
    expect((await invoiceOf(tenant, paid.id)).status).toBe('refunded');
    expect((await outboxTypes(invoicing.databaseUrl, paid.id)).filter((type) => type === 'invoice.refunded')).toHaveLength(1);

    // The same request again answers the same credit note; another refund is refused; the wallet is credited once.
    expect((await payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'requested_by_customer', requestId })).creditNote).toMatchObject({ id: refund!.id, number: 'CN-000001' });
    expect(await grpcFailure(payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'duplicate', requestId: 'req_other' }))).toMatchObject({ errorCode: 'invoice_refunded' });
    expect((await ledgerOf(wallet.id)).filter((row) => row.kind === 'refund')).toHaveLength(1);
    expect(pawapay.requests.length).toBe(before);
  });

  it('a partial refund credits the wallet with its amount only; the rest can follow, never more than the debit', async () => {
    const tenant = newTenant(true);
    const wallet = await walletOf(tenant, 5_000);
    const paid = await payFromWallet(wallet, 1_200);
    const part = await payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'requested_by_customer', requestId: 'req_part', amount: 200n });
    expect(part.creditNote).toMatchObject({ amount: { amountMinor: 200n, currency: 'zmw' } });
    expect(await wallets.get(tenant, wallet.id)).toMatchObject({ balance: 4_000 });
    expect((await invoiceOf(tenant, paid.id)).status).toBe('paid');
    expect(await grpcFailure(payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'requested_by_customer', requestId: 'req_more', amount: 1_001n }))).toMatchObject({ errorCode: 'amount_too_large' });
    const rest = await payments.client.refundInvoice({ tenant, invoiceId: paid.id, reason: 'requested_by_customer', requestId: 'req_rest' });
    expect(rest.creditNote).toMatchObject({ amount: { amountMinor: 1_000n } });
    expect((await ledgerOf(wallet.id)).filter((row) => row.kind === 'refund').map((row) => row.amount)).toEqual(['200', '1000']);
    expect(await wallets.get(tenant, wallet.id)).toMatchObject({ balance: 5_000 });
    expect((await invoiceOf(tenant, paid.id)).status).toBe('refunded');
  });

  it('refuse a paid top-up invoice (409 invoice_top_up): its money is in the wallet', async () => {
    const tenant = newTenant(false);
    const wallet = await walletOf(tenant, 0);
    const topUpInvoice = await walletInvoicing.raiseTopUpInvoice(wallet, 'wtu_refund_test', 2_000, '', `top-up-${wallet.id}`, false);
    const { payment } = await payments.client.initiatePayment({ tenant, invoiceId: topUpInvoice.id, phoneNumber: '+260971000001', provider: 'MTN_MOMO_ZMB', requestId: '' });
    await payments.client.decideSandboxPayment({ token: payment!.redirectUrl.slice(payment!.redirectUrl.lastIndexOf('/') + 1), decision: 'approve' });
    await eventually(async () => (await invoiceOf(tenant, topUpInvoice.id)).status === 'paid', 15_000, 'the top-up invoice paid');
    expect(await grpcFailure(payments.client.refundInvoice({ tenant, invoiceId: topUpInvoice.id, reason: 'requested_by_customer', requestId: '' }))).toMatchObject({ errorCode: 'invoice_top_up' });
    expect((await invoiceOf(tenant, topUpInvoice.id)).status).toBe('paid');
    expect(await queryDatabase(payments.databaseUrl, 'SELECT id FROM refunds WHERE invoice_id = $1', [topUpInvoice.id])).toEqual([]);
  });
});
