import type { Money } from '@recur/money';
import type { PaymentProvider, ProviderRules } from '@recur/vocabulary';
import type { AdapterName, Outcome, Payment } from '../payments/payment';

/** What the provider says of a payment when asked (the janitor's status check). */
export type ProviderStatus = { state: 'pending' } | { state: 'not_found' } | ({ state: 'settled' } & { outcome: Outcome });

/** The answer to starting a payment: where the payer goes, or the provider's refusal. */
export type StartResult = { redirectUrl: string } | { rejected: { code: string; message: string } };

export interface RefundRequest {
  /** Our id of the refund, a UUIDv4 the provider keeps (idempotency at the provider). */
  refundId: string;
  payment: Payment;
  amount: Money;
}

/**
 * The answer to asking for a refund: carried out at once (the sandbox), accepted and still to be
 * completed (pawaPay: its final status comes by callback or status check), or refused.
 */
export type RefundResult = { completed: true } | { accepted: true } | { rejected: { code: string; message: string } };

/** A refund's final status at the provider. */
export type RefundFinal = { status: 'completed' } | { status: 'failed'; code: string; message: string };

/** What the provider says of a refund when asked (the refund worker's status check). */
export type ProviderRefundStatus = { state: 'pending' } | { state: 'not_found' } | { state: 'final'; final: RefundFinal };

/** A refund callback after authentication: which refund it names and, when final, its status. */
export interface ProviderRefundCallback {
  providerRefundId: string;
  final: RefundFinal | null;
}

/** A provider callback after authentication: which payment it names and, when final, its outcome. */
export interface ProviderCallback {
  providerPaymentId: string;
  outcome: Outcome | null;
}

/** A callback as the gateway received it over HTTP. */
export interface ReceivedCallback {
  method: string;
  authority: string;
  path: string;
  /** Header names in lowercase. */
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * The one provider port. Each adapter speaks one provider's API; the service never knows which
 * beyond the name, and picks it by the tenant's mode (adapterFor). `refund` is the seam the
 * refunds capability (credit notes) calls.
 */
export interface PaymentProviderAdapter {
  readonly name: AdapterName;
  /** Starts a payment page session for `payment`; the payer returns to `returnUrl`. */
  start(payment: Payment, returnUrl: string): Promise<StartResult>;
  /**
   * Asks the payer's phone for `payment` with nobody at a page (a push the payer approves with
   * their PIN: auto recharge). Idempotent at the provider by the payment's provider id, so a
   * repeat after a lost answer or a crash is not a second charge. Answers where someone who
   * comes looking for the payment is sent (`returnUrl`, Recur's return page), or the refusal.
   */
  push(payment: Payment, returnUrl: string): Promise<StartResult>;
  /** Asks the provider what became of the payment. */
  status(payment: Payment): Promise<ProviderStatus>;
  /** Refunds a succeeded payment in full at the provider. */
  refund(request: RefundRequest): Promise<RefundResult>;
  /** Asks the provider what became of a refund it accepted. */
  refundStatus(request: RefundRequest): Promise<ProviderRefundStatus>;
  /** Authenticates a callback as the provider documents it; throws `unauthenticated` otherwise. */
  parseCallback(callback: ReceivedCallback): Promise<ProviderCallback>;
  /** Authenticates a refund callback as the provider documents it; throws `unauthenticated` otherwise. */
  parseRefundCallback(callback: ReceivedCallback): Promise<ProviderRefundCallback>;
  /** The provider's own account of what each provider takes (pawaPay's active configuration); the sandbox has none. */
  activeConfiguration?(): Promise<ProviderRules>;
  /** The provider's prediction of a phone number's provider (pawaPay's predict-provider); the sandbox has none. */
  predictProvider?(phoneNumber: string): Promise<PaymentProvider | null>;
}

export const PAYMENT_PROVIDER_ADAPTERS = Symbol('PAYMENT_PROVIDER_ADAPTERS');
