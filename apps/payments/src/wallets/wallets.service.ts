import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, failedPrecondition, newId, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { money } from '@recur/money';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { PaymentsRepository } from '../payments/payments.repository';
import { ProviderDirectory } from '../providers/provider-directory.service';
import {
  type AutoRecharge,
  checkAmount,
  checkAutoRecharge,
  checkWalletCurrency,
  crossings,
  DISABLED_AUTO_RECHARGE,
  type Wallet,
  type WalletTopUp,
  type WalletTransaction,
  type WalletTransactionKind,
} from './wallet';
import type { Refund } from '../refunds/refund';
import type { WalletEvent } from './wallet-events.translator';
import { WalletInvoicing } from './wallet-invoicing.client';
import { WalletsRepository } from './wallets.repository';

type Tx = Prisma.TransactionClient;

export interface NewWalletFields {
  customerId: string;
  currency: string;
  lowBalanceThreshold: number;
}

export interface WalletSettings {
  lowBalanceThreshold?: number;
  autoRecharge?: AutoRecharge;
}

/** One ledger entry to apply: a credit (positive) or a debit (negative), once per `key`. */
export interface LedgerEntry {
  kind: WalletTransactionKind;
  amount: number;
  key: string;
  invoiceId?: string;
  topUpId?: string;
  /** The row's id when it must be known in advance (a debit's id is the invoice's payment id). */
  id?: string;
}

/** What an invoice the wallet may pay looks like (from invoicing's InvoiceFinalized). */
export interface WalletPayableInvoice {
  id: string;
  customerId: string;
  currency: string;
  amountDue: number;
}

/** `collecting`: a payment of the invoice is under way or succeeded: the wallet leaves the invoice to it. */
export type WalletPaymentOutcome = 'paid' | 'no_wallet' | 'not_covered' | 'already_paid' | 'collecting' | { refused: string };

/**
 * Prepaid wallet use cases. Every balance change goes through `applyEntry`, in one
 * transaction with the wallet row locked: the ledger row, the new balance, the threshold
 * crossings it caused (wallet.low_balance, an automatic top-up) and their events commit
 * together or not at all.
 */
@Injectable()
export class WalletsService {
  constructor(
    private readonly wallets: WalletsRepository,
    private readonly invoicing: WalletInvoicing,
    private readonly prisma: PrismaService,
    private readonly payments: PaymentsRepository,
    private readonly directory: ProviderDirectory,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /** A new empty wallet; the customer's second wallet in one currency is refused (wallet_exists). */
  async create(tx: Tx, tenant: TenantRef, fields: NewWalletFields): Promise<Wallet> {
    const now = this.now();
    const wallet: Wallet = {
      id: newId('wal'),
      tenant,
      customerId: fields.customerId,
      currency: checkWalletCurrency(fields.currency),
      balance: 0,
      lowBalanceThreshold: checkAmount(fields.lowBalanceThreshold, 'low_balance_threshold'),
      autoRecharge: DISABLED_AUTO_RECHARGE,
      createdAt: now,
      updatedAt: now,
    };
    await this.wallets.insert(tx, wallet);
    return wallet;
  }

  get(tenant: TenantRef, id: string): Promise<Wallet> {
    return this.wallets.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, customerId: string | undefined): Promise<{ wallets: Wallet[]; page: PageInfo }> {
    return this.wallets.list(tenant, page, customerId);
  }

  async listTransactions(tenant: TenantRef, walletId: string, page: Page): Promise<{ transactions: WalletTransaction[]; page: PageInfo }> {
    await this.wallets.get(tenant, walletId);
    return this.wallets.listTransactions(tenant, walletId, page);
  }

  /** Changes the thresholds and the auto recharge setting. A new threshold is no crossing: it emits nothing now. */
  async update(tx: Tx, tenant: TenantRef, id: string, settings: WalletSettings): Promise<Wallet> {
    const wallet = await this.wallets.getForUpdate(tx, tenant, id);
    const updated: Wallet = {
      ...wallet,
      lowBalanceThreshold: settings.lowBalanceThreshold === undefined ? wallet.lowBalanceThreshold : checkAmount(settings.lowBalanceThreshold, 'low_balance_threshold'),
      autoRecharge: settings.autoRecharge === undefined ? wallet.autoRecharge : checkAutoRecharge(settings.autoRecharge),
      updatedAt: this.now(),
    };
    const recharge = updated.autoRecharge;
    if (settings.autoRecharge !== undefined && recharge.enabled && recharge.provider !== '') {
      // A top-up the provider could never take is refused now, not discovered when the balance runs low.
      await this.directory.checkAmount(tenant, recharge.provider, money(recharge.amount, wallet.currency), { amount: 'auto_recharge.amount', currency: 'auto_recharge.provider' });
    }
    await this.wallets.saveSettings(tx, updated);
    return updated;
  }

  /**
   * Raises the top-up invoice through invoicing (open, billing_reason top_up, its payment_url)
   * and keeps the pending top-up; the wallet is credited when the invoice is paid (creditTopUp).
   */
  async topUp(tx: Tx, tenant: TenantRef, id: string, amount: number, sellerName: string, requestId: string): Promise<WalletTopUp> {
    checkAmount(amount, 'amount', { positive: true });
    const wallet = await this.wallets.get(tenant, id, tx);
    const topUpId = newId('wtu');
    const invoice = await this.invoicing.raiseTopUpInvoice(wallet, topUpId, amount, sellerName, requestId ? `wallet-top-up:${wallet.id}:${requestId}` : topUpId, false);
    // A retry whose first try raised the invoice but did not commit finds the invoice again.
    const earlier = await this.wallets.findTopUpByInvoiceForUpdate(tx, tenant, invoice.id);
    if (earlier) return earlier;
    const now = this.now();
    const topUp: WalletTopUp = {
      id: topUpId, tenant, walletId: wallet.id, invoiceId: invoice.id, amount, currency: wallet.currency, status: 'pending', automatic: false,
      paymentUrl: invoice.paymentUrl, paymentId: '', createdAt: now, updatedAt: now, creditedAt: null,
    };
    await this.wallets.insertTopUp(tx, topUp);
    return topUp;
  }

  /**
   * The one way a balance changes: a ledger row under the wallet's lock (the caller's
   * `wallet` was read with getForUpdate in `tx`), the balance set to its balance_after, and what
   * the change crossed: wallet.low_balance, and an automatic top-up requested from the
   * auto-recharge worker (wallet.auto_recharge follows once it has started).
   */
  async applyEntry(tx: Tx, wallet: Wallet, entry: LedgerEntry): Promise<{ wallet: Wallet; transaction: WalletTransaction }> {
    const before = wallet.balance;
    const after = before + entry.amount;
    if (after < 0) throw failedPrecondition('wallet_insufficient_balance', `Wallet '${wallet.id}' holds ${before}, less than ${-entry.amount}.`);
    const now = this.now();
    const transaction: WalletTransaction = {
      id: entry.id ?? newId('wtx'),
      tenant: wallet.tenant,
      walletId: wallet.id,
      kind: entry.kind,
      amount: entry.amount,
      balanceAfter: after,
      currency: wallet.currency,
      key: entry.key,
      invoiceId: entry.invoiceId ?? '',
      topUpId: entry.topUpId ?? '',
      createdAt: now,
    };
    await this.wallets.append(tx, transaction);
    const changed: Wallet = { ...wallet, balance: after, updatedAt: now };
    const crossed = crossings(wallet, before, after);
    const events: WalletEvent[] = crossed.lowBalance ? [{ kind: 'low_balance', wallet: changed, at: now }] : [];
    if (crossed.autoRecharge) {
      await this.wallets.insertTopUp(tx, {
        id: newId('wtu'), tenant: wallet.tenant, walletId: wallet.id, invoiceId: '', amount: wallet.autoRecharge.amount, currency: wallet.currency,
        status: 'requested', automatic: true, paymentUrl: '', paymentId: '', createdAt: now, updatedAt: now, creditedAt: null,
      });
    }
    await this.wallets.publish(tx, events);
    return { wallet: changed, transaction };
  }

  /**
   * A paid top-up invoice credits its wallet, once (the top-up's row lock and status, and the
   * ledger key `top_up:<id>`), and emits wallet.topped_up. Any other invoice changes nothing.
   */
  async creditTopUp(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<WalletTopUp | undefined> {
    const topUp = await this.wallets.findTopUpByInvoiceForUpdate(tx, tenant, invoiceId);
    if (!topUp || topUp.status === 'credited') return undefined;
    const wallet = await this.wallets.getForUpdate(tx, tenant, topUp.walletId);
    const credited = await this.applyEntry(tx, wallet, { kind: 'top_up', amount: topUp.amount, key: `top_up:${topUp.id}`, invoiceId, topUpId: topUp.id });
    const now = this.now();
    const done: WalletTopUp = { ...topUp, status: 'credited', creditedAt: now, updatedAt: now };
    await this.wallets.saveTopUp(tx, done);
    await this.wallets.publish(tx, [{ kind: 'topped_up', wallet: credited.wallet, topUp: done, at: now }]);
    return done;
  }

  /** An automatic top-up whose payment failed no longer counts as in flight: the next crossing may start another. */
  async failTopUp(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<void> {
    const topUp = await this.wallets.findTopUpByInvoiceForUpdate(tx, tenant, invoiceId);
    if (!topUp || !topUp.automatic || topUp.status !== 'pending') return;
    await this.wallets.saveTopUp(tx, { ...topUp, status: 'failed', updatedAt: this.now() });
  }

  /**
   * The wallet pays a subscription or one-off invoice first (docs/api/wallets.md): when the customer's
   * wallet in the invoice's currency holds the whole amount due, invoicing marks the invoice
   * paid by the wallet debit (PayInvoice, its payment id the debit's id) and the debit is
   * appended, in this transaction. Otherwise nothing happens and the invoice is collected as
   * usual. The debit's id is derived from the wallet and the invoice, so a redelivered event
   * after a crash between PayInvoice and the commit repeats the same PayInvoice (answered
   * again by invoicing) and debits once; the ledger key `invoice:<id>` refuses a second debit.
   * One invoice, one collection: the invoice's lock (the one payment initiation takes) comes
   * first, and a payment of the invoice already under way or succeeded keeps the wallet out.
   */
  /** Whether the customer has a wallet that could pay an invoice in `currency` (read, not locked: the consumer's first look). */
  customerHasWallet(tenant: TenantRef, customerId: string, currency: string): Promise<boolean> {
    return this.wallets.exists(tenant, customerId, currency);
  }

  async payInvoice(tx: Tx, tenant: TenantRef, invoice: WalletPayableInvoice): Promise<WalletPaymentOutcome> {
    if (invoice.amountDue <= 0) return 'not_covered';
    await this.payments.lockInvoice(tx, tenant, invoice.id);
    if ((await this.payments.findPending(tx, tenant, invoice.id)) || (await this.payments.findSucceeded(tx, tenant, invoice.id))) return 'collecting';
    const wallet = await this.wallets.findForCustomerForUpdate(tx, tenant, invoice.customerId, invoice.currency);
    if (!wallet) return 'no_wallet';
    const key = `invoice:${invoice.id}`;
    if (await this.wallets.hasTransaction(tx, wallet.id, key)) return 'already_paid';
    if (wallet.balance < invoice.amountDue) return 'not_covered';
    const transactionId = derivedId('wtx', `${wallet.id}:${key}`);
    const paid = await this.invoicing.payFromWallet(tenant, invoice.id, transactionId, invoice.amountDue, invoice.currency, this.now());
    if (paid !== 'paid') return paid;
    await this.applyEntry(tx, wallet, { kind: 'invoice_payment', amount: -invoice.amountDue, key, invoiceId: invoice.id, id: transactionId });
    return 'paid';
  }

  /** The wallet debit that paid `invoiceId`, if a wallet paid it (what a refund of it gives back). */
  findInvoiceDebit(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<WalletTransaction | undefined> {
    return this.wallets.findInvoiceDebit(tx, tenant, invoiceId);
  }

  /**
   * A refund of a wallet-paid invoice gives (all or part of) the debit back to its wallet: a
   * credit of the refund's amount, keyed `refund:<cn_…>` (once per refund), in the caller's transaction with the wallet
   * locked. A credit crosses no threshold downwards, so it sends no wallet event.
   */
  async creditRefund(tx: Tx, debit: WalletTransaction, refund: Pick<Refund, 'id' | 'amount'>): Promise<WalletTransaction> {
    const wallet = await this.wallets.getForUpdate(tx, debit.tenant, debit.walletId);
    return (await this.applyEntry(tx, wallet, { kind: 'refund', amount: refund.amount.amountMinor, key: `refund:${refund.id}`, invoiceId: debit.invoiceId })).transaction;
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** An id in the usual shape (`wtx_` and 24 base62 characters), the same every time for one seed. */
export function derivedId(prefix: 'wtx', seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let out = '';
  for (let index = 0; out.length < 24; index += 1) out += BASE62[digest[index] % 62];
  return `${prefix}_${out}`;
}
