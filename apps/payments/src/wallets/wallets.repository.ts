import { Injectable } from '@nestjs/common';
import { type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import { isUniqueViolation, NEWEST_FIRST, readListPage } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { PRODUCER } from '../payments/payments.repository';
import { type Wallet, walletExists, walletNotFound, type WalletTopUp, type WalletTransaction } from './wallet';
import { translateWalletEvent, type WalletEvent } from './wallet-events.translator';
import { fromTopUpRow, fromTransactionRow, fromWalletRow } from './wallet.mapper';

type Tx = Prisma.TransactionClient;

/** NOTIFY channel that wakes the auto-recharge worker when an automatic top-up is requested. */
export const WALLET_TOP_UPS_DUE_CHANNEL = 'wallet_top_ups_due';

/**
 * Wallets, their ledger and their top-ups in the service's database. Every tenant-scoped query
 * filters by account and mode. The ledger is only ever inserted into (the database refuses
 * anything else); the balance is written by `append` alone, in the caller's transaction with
 * the wallet row locked (getForUpdate).
 */
@Injectable()
export class WalletsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async insert(tx: Tx, wallet: Wallet): Promise<void> {
    try {
      await tx.wallet.create({
        data: {
          id: wallet.id,
          accountId: wallet.tenant.accountId,
          livemode: wallet.tenant.livemode,
          customerId: wallet.customerId,
          currency: wallet.currency,
          balance: 0n,
          lowBalanceThreshold: BigInt(wallet.lowBalanceThreshold),
          createdAt: wallet.createdAt,
          updatedAt: wallet.updatedAt,
        },
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw walletExists(wallet.customerId, wallet.currency);
      throw error;
    }
  }

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Wallet> {
    const row = await tx.wallet.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw walletNotFound(id);
    return fromWalletRow(row);
  }

  /** Locks the wallet for the rest of the transaction: every balance change of one wallet serialises here. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Wallet> {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM wallets WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    if (!row) throw walletNotFound(id);
    return this.get(tenant, id, tx);
  }

  /** Whether the customer has a wallet in `currency` (read, not locked). */
  async exists(tenant: TenantRef, customerId: string, currency: string): Promise<boolean> {
    const [row] = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM wallets WHERE account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} AND customer_id = ${customerId} AND currency = ${currency} LIMIT 1`;
    return row !== undefined;
  }

  /** The customer's wallet in `currency`, locked; undefined when the customer has none. */
  async findForCustomerForUpdate(tx: Tx, tenant: TenantRef, customerId: string, currency: string): Promise<Wallet | undefined> {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM wallets WHERE account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} AND customer_id = ${customerId} AND currency = ${currency} FOR UPDATE`;
    return row ? this.get(tenant, row.id, tx) : undefined;
  }

  async list(tenant: TenantRef, page: Page, customerId: string | undefined): Promise<{ wallets: Wallet[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(customerId === undefined ? {} : { customerId }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'wallet', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.wallet.findMany(read),
      count: (query) => this.prisma.wallet.count(query),
    });
    return { wallets: rows.map(fromWalletRow), page: info };
  }

  async saveSettings(tx: Tx, wallet: Wallet): Promise<void> {
    const recharge = wallet.autoRecharge;
    await tx.wallet.update({
      where: { id: wallet.id },
      data: {
        lowBalanceThreshold: BigInt(wallet.lowBalanceThreshold),
        autoRechargeEnabled: recharge.enabled,
        autoRechargeThreshold: BigInt(recharge.threshold),
        autoRechargeAmount: BigInt(recharge.amount),
        autoRechargePhone: recharge.phoneNumber,
        autoRechargeProvider: recharge.provider,
        updatedAt: wallet.updatedAt,
      },
    });
  }

  /** The wallet debit that paid the invoice (its `invoice:<id>` row), if a wallet of the tenant paid it. */
  async findInvoiceDebit(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<WalletTransaction | undefined> {
    const row = await tx.walletTransaction.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, kind: 'invoice_payment', key: `invoice:${invoiceId}` } });
    return row ? fromTransactionRow(row) : undefined;
  }

  async hasTransaction(tx: Tx, walletId: string, key: string): Promise<boolean> {
    return (await tx.walletTransaction.count({ where: { walletId, key } })) > 0;
  }

  /**
   * Appends one ledger row and sets the wallet's balance to the row's balance_after, in the
   * caller's transaction; the caller holds the wallet's row lock. The (wallet, key) unique index
   * makes a second row with the same key fail, and the wallets CHECK a negative balance.
   */
  async append(tx: Tx, transaction: WalletTransaction): Promise<void> {
    await tx.walletTransaction.create({
      data: {
        id: transaction.id,
        accountId: transaction.tenant.accountId,
        livemode: transaction.tenant.livemode,
        walletId: transaction.walletId,
        kind: transaction.kind,
        amount: BigInt(transaction.amount),
        balanceAfter: BigInt(transaction.balanceAfter),
        currency: transaction.currency,
        key: transaction.key,
        invoiceId: transaction.invoiceId,
        topUpId: transaction.topUpId,
        createdAt: transaction.createdAt,
      },
    });
    await tx.wallet.update({ where: { id: transaction.walletId }, data: { balance: BigInt(transaction.balanceAfter), updatedAt: transaction.createdAt } });
  }

  async listTransactions(tenant: TenantRef, walletId: string, page: Page): Promise<{ transactions: WalletTransaction[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, walletId };
    const { rows, page: info } = await readListPage(page, {
      resource: 'wallet transaction', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.walletTransaction.findMany(read),
      count: (query) => this.prisma.walletTransaction.count(query),
    });
    return { transactions: rows.map(fromTransactionRow), page: info };
  }

  /**
   * A new top-up. An automatic one is `requested` and due for the auto-recharge worker; when
   * the wallet already has an automatic top-up in flight (requested or pending), the partial
   * unique index refuses it and this answers false: never two automatic top-ups at once.
   */
  async insertTopUp(tx: Tx, topUp: WalletTopUp): Promise<boolean> {
    const { count } = await tx.walletTopUp.createMany({
      data: [{
        id: topUp.id,
        accountId: topUp.tenant.accountId,
        livemode: topUp.tenant.livemode,
        walletId: topUp.walletId,
        invoiceId: topUp.invoiceId,
        amount: BigInt(topUp.amount),
        currency: topUp.currency,
        status: topUp.status,
        automatic: topUp.automatic,
        paymentUrl: topUp.paymentUrl,
        paymentId: topUp.paymentId,
        createdAt: topUp.createdAt,
        updatedAt: topUp.updatedAt,
        dueAt: topUp.status === 'requested' ? topUp.createdAt : null,
      }],
      skipDuplicates: true,
    });
    if (count === 1 && topUp.status === 'requested') await tx.$executeRaw`SELECT pg_notify(${WALLET_TOP_UPS_DUE_CHANNEL}, '')`;
    return count === 1;
  }

  /** The top-up an invoice was raised for, locked; undefined for any other invoice. */
  async findTopUpByInvoiceForUpdate(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<WalletTopUp | undefined> {
    const [row] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM wallet_top_ups WHERE account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} AND invoice_id = ${invoiceId} FOR UPDATE`;
    return row ? fromTopUpRow((await tx.walletTopUp.findUnique({ where: { id: row.id } }))!) : undefined;
  }

  async getTopUpForUpdate(tx: Tx, id: string): Promise<WalletTopUp | undefined> {
    const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM wallet_top_ups WHERE id = ${id} FOR UPDATE`;
    return row ? fromTopUpRow((await tx.walletTopUp.findUnique({ where: { id } }))!) : undefined;
  }

  /** Saves a top-up's progress; `dueAt` is the auto-recharge worker's next look (null: none). */
  async saveTopUp(tx: Tx, topUp: WalletTopUp, dueAt: Date | null = null): Promise<void> {
    await tx.walletTopUp.update({
      where: { id: topUp.id },
      data: {
        invoiceId: topUp.invoiceId,
        status: topUp.status,
        paymentUrl: topUp.paymentUrl,
        paymentId: topUp.paymentId,
        updatedAt: topUp.updatedAt,
        creditedAt: topUp.creditedAt,
        dueAt,
        leaseUntil: null,
        ...(dueAt ? {} : { attempts: 0, lastError: null }),
      },
    });
    if (dueAt) await tx.$executeRaw`SELECT pg_notify(${WALLET_TOP_UPS_DUE_CHANNEL}, '')`;
  }

  async publish(tx: Tx, events: WalletEvent[]): Promise<void> {
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateWalletEvent));
  }
}
