import { requireEnv } from '@recur/kernel';

export const SUBSCRIPTION_CONFIG = Symbol('SUBSCRIPTION_CONFIG');

/** The subscription service's own settings, beyond every service's ServiceConfig. */
export interface SubscriptionConfig {
  /** `host:port` of the catalog (plans are read from it at sale). */
  catalogAddress: string;
  /** `host:port` of invoicing (the billing clock raises each period's invoice there). */
  invoicingAddress: string;
}

export function subscriptionConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SubscriptionConfig {
  return { catalogAddress: requireEnv('CATALOG_GRPC_ADDR', env), invoicingAddress: requireEnv('INVOICING_GRPC_ADDR', env) };
}
