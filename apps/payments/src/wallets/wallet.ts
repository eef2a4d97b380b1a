import { DomainError, invalidArgument, type TenantRef } from '@recur/kernel';
import { AMOUNT_MAX, checkCurrencyCode } from '@recur/money';
import type { PaymentProvider } from '@recur/vocabulary';
import { checkPhoneNumber, checkProvider } from '../payments/payment';

/** Automatic top-ups: falling under `threshold` starts one of `amount`, charged to the stored number. */
export interface AutoRecharge {
  enabled: boolean;
  threshold: number;
  amount: number;
  /** E.164; empty while never set. */
  phoneNumber: string;
  provider: PaymentProvider | '';
}

/** A customer's prepaid balance in one currency, as the domain sees it. */
export interface Wallet {
  id: string;
  tenant: TenantRef;
  customerId: string;
  currency: string;
  /** The sum of the ledger, never negative (a CHECK in the database). */
  balance: number;
  /** 0: no low-balance events. */
  lowBalanceThreshold: number;
  autoRecharge: AutoRecharge;
  createdAt: Date;
  updatedAt: Date;
}

/** top_up and refund credit, invoice_payment debits (a refund gives a wallet-paid invoice's debit back). */
export type WalletTransactionKind = 'top_up' | 'invoice_payment' | 'refund';

/** One row of the append-only ledger. */
export interface WalletTransaction {
  id: string;
  tenant: TenantRef;
  walletId: string;
  kind: WalletTransactionKind;
  /** Signed: credits positive, debits negative. */
  amount: number;
  balanceAfter: number;
  currency: string;
  /** What makes the row happen once per wallet: `top_up:<wtu_…>`, `invoice:<in_…>`, `refund:<cn_…>`. */
  key: string;
  invoiceId: string;
  topUpId: string;
  createdAt: Date;
}

/** requested: automatic, invoice not raised yet; pending: invoice raised; credited; failed (its payment failed). */
export type TopUpStatus = 'requested' | 'pending' | 'credited' | 'failed';

export interface WalletTopUp {
  id: string;
  tenant: TenantRef;
  walletId: string;
  invoiceId: string;
  amount: number;
  currency: string;
  status: TopUpStatus;
  automatic: boolean;
  paymentUrl: string;
  paymentId: string;
  createdAt: Date;
  updatedAt: Date;
  creditedAt: Date | null;
}

export const DISABLED_AUTO_RECHARGE: AutoRecharge = { enabled: false, threshold: 0, amount: 0, phoneNumber: '', provider: '' };

/** A threshold or amount in minor units: an integer from 0 to AMOUNT_MAX. */
export function checkAmount(value: number, param: string, { positive = false } = {}): number {
  if (!Number.isSafeInteger(value) || value < (positive ? 1 : 0) || value > AMOUNT_MAX) {
    throw invalidArgument(param, `${param} must be an integer from ${positive ? 1 : 0} to ${AMOUNT_MAX} (minor units)`);
  }
  return value;
}

export const checkWalletCurrency = (currency: string): string => checkCurrencyCode(currency.toLowerCase(), 'currency');

/**
 * An auto recharge setting as PATCH gives it. Enabled, it needs a positive amount and
 * threshold, and the number and provider a payment would need (checked as POST
 * /v1/payments/initiate checks them). Disabled, whatever is given is kept as given.
 */
export function checkAutoRecharge(input: AutoRecharge): AutoRecharge {
  const threshold = checkAmount(input.threshold, 'auto_recharge.threshold');
  const amount = checkAmount(input.amount, 'auto_recharge.amount');
  if (!input.enabled) {
    return { enabled: false, threshold, amount, phoneNumber: input.phoneNumber.trim(), provider: input.provider === '' ? '' : prefixed(() => checkProvider(input.provider)) };
  }
  if (threshold < 1) throw invalidArgument('auto_recharge.threshold', 'auto_recharge.threshold must be positive when auto recharge is enabled');
  if (amount < 1) throw invalidArgument('auto_recharge.amount', 'auto_recharge.amount must be positive when auto recharge is enabled');
  const provider = prefixed(() => checkProvider(input.provider));
  const phoneNumber = prefixed(() => checkPhoneNumber(input.phoneNumber, provider));
  return { enabled: true, threshold, amount, phoneNumber, provider };
}

/** The payment checks name `phone_number` and `provider`; here they sit under `auto_recharge`. */
function prefixed<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof DomainError && error.param) throw new DomainError(error.kind, error.code, error.message, `auto_recharge.${error.param}`);
    throw error;
  }
}

/** What one balance change caused: the crossings of the two thresholds. */
export interface BalanceCrossings {
  lowBalance: boolean;
  autoRecharge: boolean;
}

/**
 * A threshold is crossed when the balance goes from at least it to under it (docs/api/wallets.md,
 * wallets): so each event happens once per crossing, and rising back to the threshold re-arms
 * it with no state to keep. A threshold of 0 is never crossed (a balance is never negative).
 */
export function crossings(wallet: Wallet, before: number, after: number): BalanceCrossings {
  const crossed = (threshold: number) => threshold > 0 && before >= threshold && after < threshold;
  return {
    lowBalance: crossed(wallet.lowBalanceThreshold),
    autoRecharge: wallet.autoRecharge.enabled && wallet.autoRecharge.amount > 0 && crossed(wallet.autoRecharge.threshold),
  };
}

export const walletNotFound = (id: string) => new DomainError('not_found', 'resource_missing', `No such wallet: '${id}'`, 'id');
export const walletExists = (customerId: string, currency: string) =>
  new DomainError('already_exists', 'wallet_exists', `Customer '${customerId}' already has a ${currency.toUpperCase()} wallet.`, 'currency');
