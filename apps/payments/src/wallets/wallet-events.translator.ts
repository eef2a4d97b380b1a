import { newPublicEvent, type OutboxEvent, type PublicEventData } from '@recur/messaging';
import type { Wallet, WalletTopUp } from './wallet';
import { toTopUpJson, toWalletJson } from './wallet.mapper';

/** What happened to a wallet that the specification's `wallet.*` events tell. */
export type WalletEvent =
  | { kind: 'topped_up'; wallet: Wallet; topUp: WalletTopUp; at: Date }
  | { kind: 'low_balance'; wallet: Wallet; at: Date }
  | { kind: 'auto_recharge'; wallet: Wallet; topUp: WalletTopUp; at: Date };

/**
 * Each wallet event becomes its public webhook event (webhook-dispatch reads the payments
 * service's `.public` topic). `data.object` is the wallet after the change; `data.top_up` the
 * credited or started top-up; `data.threshold` the threshold that was crossed.
 */
export function translateWalletEvent(event: WalletEvent): OutboxEvent[] {
  const { wallet, at } = event;
  switch (event.kind) {
    case 'topped_up': {
      const data: PublicEventData & { top_up: object } = { object: toWalletJson(wallet), top_up: toTopUpJson(event.topUp) };
      return [newPublicEvent(wallet.tenant, 'wallet.topped_up', wallet.id, data, at)];
    }
    case 'low_balance': {
      const data: PublicEventData & { threshold: number } = { object: toWalletJson(wallet), threshold: wallet.lowBalanceThreshold };
      return [newPublicEvent(wallet.tenant, 'wallet.low_balance', wallet.id, data, at)];
    }
    case 'auto_recharge': {
      const data: PublicEventData & { top_up: object } = { object: toWalletJson(wallet), top_up: toTopUpJson(event.topUp) };
      return [newPublicEvent(wallet.tenant, 'wallet.auto_recharge', wallet.id, data, at)];
    }
  }
}
