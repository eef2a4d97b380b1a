import { join } from 'node:path';
import fc from 'fast-check';
import type { Clock, TenantRef } from '@recur/kernel';
import { applyMigrations } from '@recur/persistence';
import { SERVICE_PLATFORM_MIGRATIONS } from '@recur/service-host';
import { createTestDatabase, queryDatabase } from '@recur/testing';
import { PrismaService } from '../src/infrastructure/prisma.service';
import type { Wallet } from '../src/wallets/wallet';
import { WalletInvoicing } from '../src/wallets/wallet-invoicing.client';
import { PaymentsRepository } from '../src/payments/payments.repository';
import { ProviderDirectory } from '../src/providers/provider-directory.service';
import { SandboxAdapter } from '../src/providers/sandbox.adapter';
import { WalletsRepository } from '../src/wallets/wallets.repository';
import { WalletsService } from '../src/wallets/wallets.service';

/**
 * The wallet ledger on a real PostgreSQL database, through the service's own classes
 * in-process: the database refuses to change the ledger, the balance is the sum of the ledger
 * under any interleaving of concurrent credits and debits, and each threshold fires once per
 * crossing.
 */
jest.setTimeout(120_000);

let databaseUrl: string;
let prisma: PrismaService;
let service: WalletsService;
let invoicing: WalletInvoicing;
let tenantCount = 0;
const clock: Clock = () => new Date();
const newTenant = (): TenantRef => ({ accountId: `acct_wallet_${++tenantCount}_${Date.now()}`, livemode: false });

beforeAll(async () => {
  databaseUrl = await createTestDatabase('payments_wallets');
  await applyMigrations({ databaseUrl, migrationsDir: join(__dirname, '..', 'prisma', 'migrations'), libraries: SERVICE_PLATFORM_MIGRATIONS });
  prisma = new PrismaService(databaseUrl);
  // Never called by these tests (applyEntry talks to no other service); a closed port if it were.
  invoicing = new WalletInvoicing({ invoicingGrpcAddr: '127.0.0.1:9' } as never);
  service = new WalletsService(new WalletsRepository(prisma), invoicing, prisma, new PaymentsRepository(prisma), new ProviderDirectory(new SandboxAdapter('http://127.0.0.1:9'), clock), clock);
});

afterAll(async () => {
  invoicing?.onModuleDestroy();
  await prisma?.$disconnect();
});

async function newWallet(settings: { lowBalanceThreshold?: number; autoRecharge?: Wallet['autoRecharge'] } = {}): Promise<Wallet> {
  const tenant = newTenant();
  const created = await service.transaction((tx) => service.create(tx, tenant, { customerId: `cus_${tenantCount}`, currency: 'zmw', lowBalanceThreshold: 0 }));
  return service.transaction((tx) => service.update(tx, tenant, created.id, settings));
}

let keyCount = 0;
/** One credit (positive) or debit (negative) in its own transaction, as the consumers run them. */
const apply = (wallet: Wallet, amount: number) =>
  service.transaction(async (tx) => {
    const locked = await new WalletsRepository(prisma).getForUpdate(tx, wallet.tenant, wallet.id);
    return service.applyEntry(tx, locked, { kind: amount > 0 ? 'top_up' : 'invoice_payment', amount, key: `test:${++keyCount}` });
  });

const ledgerOf = (walletId: string) =>
  queryDatabase<{ amount: string; balance_after: string }>(databaseUrl, 'SELECT amount::text, balance_after::text FROM wallet_transactions WHERE wallet_id = $1', [walletId]);
const balanceOf = async (walletId: string) => Number((await queryDatabase<{ balance: string }>(databaseUrl, 'SELECT balance::text FROM wallets WHERE id = $1', [walletId]))[0].balance);
const eventsOf = async (walletId: string, type: string) =>
  Number((await queryDatabase<{ count: string }>(databaseUrl, 'SELECT count(*)::text AS count FROM outbox_events WHERE key = $1 AND type = $2', [walletId, type]))[0].count);
const automaticTopUps = async (walletId: string) =>
  queryDatabase<{ status: string }>(databaseUrl, 'SELECT status FROM wallet_top_ups WHERE wallet_id = $1 AND automatic', [walletId]);

describe('the wallet ledger', () => {
  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused; a row must continue the balance; a balance cannot go negative', async () => {
    const wallet = await newWallet();
    await apply(wallet, 700);
    for (const sql of [
      'UPDATE wallet_transactions SET amount = 1 WHERE wallet_id = $1',
      'DELETE FROM wallet_transactions WHERE wallet_id = $1',
    ]) {
      await expect(queryDatabase(databaseUrl, sql, [wallet.id])).rejects.toThrow(/append-only/);
    }
    await expect(queryDatabase(databaseUrl, 'TRUNCATE wallet_transactions CASCADE')).rejects.toThrow(/append-only/);
    // A row whose balance_after does not continue the wallet's balance (700 + 5 ≠ 900).
    await expect(queryDatabase(databaseUrl, `INSERT INTO wallet_transactions (id, account_id, livemode, wallet_id, kind, amount, balance_after, currency, key, created_at)
      VALUES ('wtx_forged', $2, false, $1, 'top_up', 5, 900, 'zmw', 'forged', now())`, [wallet.id, wallet.tenant.accountId])).rejects.toThrow(/balance_after/);
    await expect(queryDatabase(databaseUrl, 'UPDATE wallets SET balance = -1 WHERE id = $1', [wallet.id])).rejects.toThrow(/wallets_balance_not_negative/);
    await expect(apply(wallet, -701)).rejects.toMatchObject({ code: 'wallet_insufficient_balance' });
    expect(await ledgerOf(wallet.id)).toEqual([{ amount: '700', balance_after: '700' }]);
    expect(await balanceOf(wallet.id)).toBe(700);
  });

  it('keeps balance == sum(ledger) >= 0 under random concurrent credits and debits (property)', async () => {
    const operation = fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: -5_000, max: -1 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(operation, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }), async (rounds) => {
        const wallet = await newWallet();
        let applied = 0;
        for (const round of rounds) {
          // Each round's operations race each other; a debit the balance cannot cover is refused, never half-done.
          const results = await Promise.allSettled(round.map((amount) => apply(wallet, amount)));
          for (const result of results) {
            if (result.status === 'fulfilled') applied += 1;
            else expect(result.reason).toMatchObject({ code: 'wallet_insufficient_balance' });
          }
        }
        const ledger = await ledgerOf(wallet.id);
        const balance = await balanceOf(wallet.id);
        expect(ledger).toHaveLength(applied);
        expect(balance).toBe(ledger.reduce((sum, row) => sum + Number(row.amount), 0));
        expect(balance).toBeGreaterThanOrEqual(0);
        expect(ledger.every((row) => Number(row.balance_after) >= 0)).toBe(true);
      }),
      { numRuns: 25, seed: 20261126 },
    );
  });

  it('emits wallet.low_balance once per crossing, re-armed when the balance rises back to the threshold, also under concurrent debits', async () => {
    const wallet = await newWallet({ lowBalanceThreshold: 500 });
    await apply(wallet, 1_000);
    // Ten concurrent debits of 100 walk the balance from 1000 to 0: one crossing of 500.
    await Promise.all(Array.from({ length: 10 }, () => apply(wallet, -100)));
    expect(await balanceOf(wallet.id)).toBe(0);
    expect(await eventsOf(wallet.id, 'wallet.low_balance')).toBe(1);
    await apply(wallet, 499); // still under: no crossing, no re-arm
    await apply(wallet, -100);
    expect(await eventsOf(wallet.id, 'wallet.low_balance')).toBe(1);
    await apply(wallet, 101); // 500: re-armed
    await apply(wallet, -1); // 499: the second crossing
    expect(await eventsOf(wallet.id, 'wallet.low_balance')).toBe(2);
  });

  it('requests one automatic top-up per crossing, and never a second while one is in flight', async () => {
    const wallet = await newWallet({ autoRecharge: { enabled: true, threshold: 300, amount: 1_000, phoneNumber: '+260971000001', provider: 'MTN_MOMO_ZMB' } });
    await apply(wallet, 800);
    await Promise.all(Array.from({ length: 8 }, () => apply(wallet, -100)));
    expect(await automaticTopUps(wallet.id)).toEqual([{ status: 'requested' }]);
    // Back over the threshold and under again while the first is still in flight: no second one.
    await apply(wallet, 500);
    await apply(wallet, -400);
    expect(await automaticTopUps(wallet.id)).toEqual([{ status: 'requested' }]);
    // Once it is no longer in flight, the next crossing starts another.
    await queryDatabase(databaseUrl, "UPDATE wallet_top_ups SET status = 'credited', due_at = NULL WHERE wallet_id = $1", [wallet.id]);
    await apply(wallet, 300);
    await apply(wallet, -300);
    expect((await automaticTopUps(wallet.id)).map((row) => row.status).sort()).toEqual(['credited', 'requested']);
  });

  it('credits a paid top-up once however often its InvoicePaid arrives, with one wallet.topped_up', async () => {
    const wallet = await newWallet();
    const now = new Date();
    const topUp = {
      id: `wtu_test${Date.now()}`, tenant: wallet.tenant, walletId: wallet.id, invoiceId: `in_topup${Date.now()}`, amount: 1_200, currency: 'zmw', status: 'pending' as const,
      automatic: false, paymentUrl: '', paymentId: '', createdAt: now, updatedAt: now, creditedAt: null,
    };
    await service.transaction((tx) => new WalletsRepository(prisma).insertTopUp(tx, topUp));
    const credits = await Promise.all(Array.from({ length: 4 }, () => service.transaction((tx) => service.creditTopUp(tx, wallet.tenant, topUp.invoiceId))));
    expect(credits.filter((credit) => credit?.status === 'credited')).toHaveLength(1);
    expect(await ledgerOf(wallet.id)).toEqual([{ amount: '1200', balance_after: '1200' }]);
    expect(await eventsOf(wallet.id, 'wallet.topped_up')).toBe(1);
    // Another invoice (not a top-up's) credits nothing.
    expect(await service.transaction((tx) => service.creditTopUp(tx, wallet.tenant, 'in_other'))).toBeUndefined();
  });

  it('validates auto recharge as a payment initiation validates the number and provider', async () => {
    const wallet = await newWallet();
    const update = (autoRecharge: Wallet['autoRecharge']) => service.transaction((tx) => service.update(tx, wallet.tenant, wallet.id, { autoRecharge }));
    const base = { enabled: true, threshold: 100, amount: 500, phoneNumber: '+260971000001', provider: 'MTN_MOMO_ZMB' } as const;
    await expect(update({ ...base, phoneNumber: '0971000001' })).rejects.toMatchObject({ param: 'auto_recharge.phone_number' });
    await expect(update({ ...base, phoneNumber: '+254712345678' })).rejects.toMatchObject({ code: 'phone_number_provider_mismatch', param: 'auto_recharge.phone_number' });
    await expect(update({ ...base, provider: 'PAYPAL' as never })).rejects.toMatchObject({ param: 'auto_recharge.provider' });
    await expect(update({ ...base, amount: 0 })).rejects.toMatchObject({ param: 'auto_recharge.amount' });
    expect((await update(base)).autoRecharge).toEqual(base);
  });

  it('refuses an auto recharge its provider could never take: another currency, below the minimum, above the maximum', async () => {
    const wallet = await newWallet();
    const update = (autoRecharge: Wallet['autoRecharge']) => service.transaction((tx) => service.update(tx, wallet.tenant, wallet.id, { autoRecharge }));
    const base = { enabled: true, threshold: 100, amount: 500, phoneNumber: '+254712345678', provider: 'MPESA_KEN' } as const;
    // The wallet holds ZMW; M-Pesa Kenya takes KES only.
    await expect(update(base)).rejects.toMatchObject({ code: 'currency_not_supported_by_provider', param: 'auto_recharge.provider' });
    const zambian = { ...base, phoneNumber: '+260971000001', provider: 'MTN_MOMO_ZMB' } as const;
    await expect(update({ ...zambian, amount: 50 })).rejects.toMatchObject({ code: 'amount_below_provider_minimum', param: 'auto_recharge.amount' });
    await expect(update({ ...zambian, amount: 5_000_001 })).rejects.toMatchObject({ code: 'amount_above_provider_maximum', param: 'auto_recharge.amount' });
    // Disabled, a setting is kept as given: nothing would be sent.
    expect((await update({ ...base, enabled: false })).autoRecharge).toMatchObject({ enabled: false, provider: 'MPESA_KEN' });
  });
});
