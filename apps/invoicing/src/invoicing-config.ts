import { optionalEnv, requireEnv } from '@recur/kernel';

/** The invoicing service's own settings, from the environment (README, Configuration). */
export interface InvoicingConfig {
  /** `host:port` of the subscription service, where customers live (required). */
  subscriptionGrpcAddr: string;
  /** Base URL of the hosted page where a customer pays; an invoice's link is `<base>/<invoice id>`. */
  paymentPageUrl: string;
}

export const INVOICING_CONFIG = Symbol('INVOICING_CONFIG');
export const DEFAULT_PAYMENT_PAGE_URL = 'http://127.0.0.1:8080/pay';

export function invoicingConfigFromEnv(env: NodeJS.ProcessEnv = process.env): InvoicingConfig {
  return {
    subscriptionGrpcAddr: requireEnv('SUBSCRIPTION_GRPC_ADDR', env),
    paymentPageUrl: (optionalEnv('PAYMENT_PAGE_URL', env) ?? DEFAULT_PAYMENT_PAGE_URL).replace(/\/+$/, ''),
  };
}
