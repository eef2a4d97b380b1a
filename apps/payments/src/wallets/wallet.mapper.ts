import { create } from '@bufbuild/protobuf';
import { presentWallet, presentWalletTopUp, type WalletJson, type WalletTopUpJson, walletV1 } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import type { PaymentProvider } from '@recur/vocabulary';
import type { WalletTopUp as TopUpRow, WalletTransaction as TransactionRow, Wallet as WalletRow } from '../generated/prisma/client';
import type { TopUpStatus, Wallet, WalletTopUp, WalletTransaction, WalletTransactionKind } from './wallet';

const seconds = (date: Date | null): bigint => (date ? BigInt(unixSeconds(date)) : 0n);

export function fromWalletRow(row: WalletRow): Wallet {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    customerId: row.customerId,
    currency: row.currency,
    balance: fromInt64(row.balance),
    lowBalanceThreshold: fromInt64(row.lowBalanceThreshold),
    autoRecharge: {
      enabled: row.autoRechargeEnabled,
      threshold: fromInt64(row.autoRechargeThreshold),
      amount: fromInt64(row.autoRechargeAmount),
      phoneNumber: row.autoRechargePhone,
      provider: row.autoRechargeProvider as PaymentProvider | '',
    },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function fromTransactionRow(row: TransactionRow): WalletTransaction {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    walletId: row.walletId,
    kind: row.kind as WalletTransactionKind,
    amount: fromInt64(row.amount),
    balanceAfter: fromInt64(row.balanceAfter),
    currency: row.currency,
    key: row.key,
    invoiceId: row.invoiceId,
    topUpId: row.topUpId,
    createdAt: row.createdAt,
  };
}

export function fromTopUpRow(row: TopUpRow): WalletTopUp {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    walletId: row.walletId,
    invoiceId: row.invoiceId,
    amount: fromInt64(row.amount),
    currency: row.currency,
    status: row.status as TopUpStatus,
    automatic: row.automatic,
    paymentUrl: row.paymentUrl,
    paymentId: row.paymentId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    creditedAt: row.creditedAt,
  };
}

export const toWalletMessage = (wallet: Wallet) =>
  create(walletV1.WalletSchema, {
    id: wallet.id,
    livemode: wallet.tenant.livemode,
    customerId: wallet.customerId,
    currency: wallet.currency,
    balance: BigInt(wallet.balance),
    lowBalanceThreshold: BigInt(wallet.lowBalanceThreshold),
    autoRecharge: {
      enabled: wallet.autoRecharge.enabled,
      threshold: BigInt(wallet.autoRecharge.threshold),
      amount: BigInt(wallet.autoRecharge.amount),
      phoneNumber: wallet.autoRecharge.phoneNumber,
      provider: wallet.autoRecharge.provider,
    },
    created: seconds(wallet.createdAt),
    updated: seconds(wallet.updatedAt),
  });

export const toTransactionMessage = (transaction: WalletTransaction) =>
  create(walletV1.WalletTransactionSchema, {
    id: transaction.id,
    livemode: transaction.tenant.livemode,
    walletId: transaction.walletId,
    kind: transaction.kind,
    amount: BigInt(transaction.amount),
    balanceAfter: BigInt(transaction.balanceAfter),
    currency: transaction.currency,
    invoiceId: transaction.invoiceId,
    topUpId: transaction.topUpId,
    created: seconds(transaction.createdAt),
  });

export const toTopUpMessage = (topUp: WalletTopUp) =>
  create(walletV1.WalletTopUpSchema, {
    id: topUp.id,
    livemode: topUp.tenant.livemode,
    walletId: topUp.walletId,
    invoiceId: topUp.invoiceId,
    amount: BigInt(topUp.amount),
    currency: topUp.currency,
    status: topUp.status,
    automatic: topUp.automatic,
    paymentUrl: topUp.paymentUrl,
    paymentId: topUp.paymentId,
    created: seconds(topUp.createdAt),
    creditedAt: seconds(topUp.creditedAt),
  });

/** The public JSON of a wallet and a top-up, as the `wallet.*` events carry them. */
export const toWalletJson = (wallet: Wallet): WalletJson => presentWallet(toWalletMessage(wallet));
export const toTopUpJson = (topUp: WalletTopUp): WalletTopUpJson => presentWalletTopUp(toTopUpMessage(topUp));
