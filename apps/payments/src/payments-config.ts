import { intEnv, optionalEnv, requireEnv } from '@recur/kernel';

/** The payments service's own settings, from the environment (docs/operations/configuration.md). */
export interface PaymentsConfig {
  /** `host:port` of the invoicing service (invoices to pay, settlements) (required). */
  invoicingGrpcAddr: string;
  /** Public base URL of the gateway's pages: the sandbox payer page and the return page. */
  pagesUrl: string;
  /** pawaPay Merchant API v2 (live apps only). */
  pawapay: PawapayConfig;
  /** A pending payment is first asked about at its provider this long after creation. */
  statusCheckAfterMs: number;
  /** A refund not finished by its request this long after it was kept is finished by the refund worker. */
  refundRecoveryAfterMs: number;
}

export interface PawapayConfig {
  /** `https://api.sandbox.pawapay.io` or `https://api.pawapay.io`. */
  baseUrl: string;
  /** The API token (a secret). Empty: live payments are refused as `provider_unavailable`. */
  apiToken: string;
  /** pawaPay's public key (PEM) that signs its callbacks. Empty: callbacks are refused; the janitor polls. */
  callbackPublicKey: string;
  /** Time limit of one call to pawaPay. */
  timeoutMs: number;
}

export const PAYMENTS_CONFIG = Symbol('PAYMENTS_CONFIG');
export const DEFAULT_PAGES_URL = 'http://127.0.0.1:8080';

export function paymentsConfigFromEnv(env: NodeJS.ProcessEnv = process.env): PaymentsConfig {
  return {
    invoicingGrpcAddr: requireEnv('INVOICING_GRPC_ADDR', env),
    pagesUrl: (optionalEnv('PAYMENT_PAGES_URL', env) ?? DEFAULT_PAGES_URL).replace(/\/+$/, ''),
    pawapay: {
      baseUrl: (optionalEnv('PAWAPAY_BASE_URL', env) ?? 'https://api.sandbox.pawapay.io').replace(/\/+$/, ''),
      apiToken: optionalEnv('PAWAPAY_API_TOKEN', env) ?? '',
      callbackPublicKey: (optionalEnv('PAWAPAY_CALLBACK_PUBLIC_KEY', env) ?? '').replace(/\\n/g, '\n'),
      timeoutMs: intEnv('PAWAPAY_TIMEOUT_MS', 5_000, env),
    },
    statusCheckAfterMs: intEnv('PAYMENT_STATUS_CHECK_AFTER_MS', 60_000, env),
    refundRecoveryAfterMs: intEnv('REFUND_RECOVERY_AFTER_MS', 30_000, env),
  };
}
