import { fromInt64 } from '@recur/money';
import type { Wallet, WalletTopUp, WalletTransaction } from '../gen/recur/payments/v1/wallet_pb';

/**
 * The public JSON of prepaid wallets: what `/v1/wallets` answers and what the `wallet.*`
 * webhook events carry. Amounts are minor units of `currency`, times unix seconds.
 */
export interface WalletJson {
  id: string;
  object: 'wallet';
  livemode: boolean;
  customer: string;
  currency: string;
  balance: number;
  low_balance_threshold: number;
  auto_recharge: { enabled: boolean; threshold: number; amount: number; phone_number: string | null; provider: string | null };
  created: number;
  updated: number;
}

export interface WalletTransactionJson {
  id: string;
  object: 'wallet_transaction';
  livemode: boolean;
  wallet: string;
  kind: string;
  amount: number;
  balance_after: number;
  currency: string;
  invoice: string | null;
  top_up: string | null;
  created: number;
}

export interface WalletTopUpJson {
  id: string;
  object: 'wallet_top_up';
  livemode: boolean;
  wallet: string;
  invoice: string | null;
  amount: number;
  currency: string;
  status: string;
  automatic: boolean;
  payment_url: string | null;
  payment: string | null;
  created: number;
  credited_at: number | null;
}

export function presentWallet(wallet: Wallet): WalletJson {
  const recharge = wallet.autoRecharge;
  return {
    id: wallet.id,
    object: 'wallet',
    livemode: wallet.livemode,
    customer: wallet.customerId,
    currency: wallet.currency,
    balance: fromInt64(wallet.balance, 'balance'),
    low_balance_threshold: fromInt64(wallet.lowBalanceThreshold, 'low_balance_threshold'),
    auto_recharge: {
      enabled: recharge?.enabled ?? false,
      threshold: fromInt64(recharge?.threshold ?? 0n, 'auto_recharge.threshold'),
      amount: fromInt64(recharge?.amount ?? 0n, 'auto_recharge.amount'),
      phone_number: recharge?.phoneNumber || null,
      provider: recharge?.provider || null,
    },
    created: fromInt64(wallet.created, 'created'),
    updated: fromInt64(wallet.updated, 'updated'),
  };
}

export function presentWalletTransaction(transaction: WalletTransaction): WalletTransactionJson {
  return {
    id: transaction.id,
    object: 'wallet_transaction',
    livemode: transaction.livemode,
    wallet: transaction.walletId,
    kind: transaction.kind,
    amount: fromInt64(transaction.amount, 'amount'),
    balance_after: fromInt64(transaction.balanceAfter, 'balance_after'),
    currency: transaction.currency,
    invoice: transaction.invoiceId || null,
    top_up: transaction.topUpId || null,
    created: fromInt64(transaction.created, 'created'),
  };
}

export function presentWalletTopUp(topUp: WalletTopUp): WalletTopUpJson {
  const creditedAt = fromInt64(topUp.creditedAt, 'credited_at');
  return {
    id: topUp.id,
    object: 'wallet_top_up',
    livemode: topUp.livemode,
    wallet: topUp.walletId,
    invoice: topUp.invoiceId || null,
    amount: fromInt64(topUp.amount, 'amount'),
    currency: topUp.currency,
    status: topUp.status,
    automatic: topUp.automatic,
    payment_url: topUp.paymentUrl || null,
    payment: topUp.paymentId || null,
    created: fromInt64(topUp.created, 'created'),
    credited_at: creditedAt === 0 ? null : creditedAt,
  };
}
