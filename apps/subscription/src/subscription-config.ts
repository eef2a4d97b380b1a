import { ConfigError, intEnv, requireEnv } from '@recur/kernel';

export const SUBSCRIPTION_CONFIG = Symbol('SUBSCRIPTION_CONFIG');

/** The subscription service's own settings, beyond every service's ServiceConfig. */
export interface SubscriptionConfig {
  /** `host:port` of the catalog (plans are read from it at sale). */
  catalogAddress: string;
  /** `host:port` of invoicing (the billing clock raises each period's invoice there). */
  invoicingAddress: string;
  /** `host:port` of usage-metering (the billing clock and the upcoming invoice read the usage to bill there). */
  usageMeteringAddress: string;
  /** `host:port` of payments (the billing clock pushes the smart retries of failed automatic charges there). */
  paymentsAddress: string;
  /**
   * Billing clock batches this process runs at once (BILLING_CLOCK_CONCURRENCY, default 4). 0: this
   * process serves the API only and runs no clock worker (another replica does; or a test drives the clock itself).
   */
  billingClockConcurrency: number;
  /** Steps per batch (BILLING_CLOCK_BATCH_SIZE, 1 to 500, default 100): one transaction, or one call to invoicing. */
  billingClockBatchSize: number;
}

export function subscriptionConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SubscriptionConfig {
  const billingClockConcurrency = intEnv('BILLING_CLOCK_CONCURRENCY', 4, env);
  if (billingClockConcurrency < 0) throw new ConfigError('BILLING_CLOCK_CONCURRENCY must be 0 or more');
  const billingClockBatchSize = intEnv('BILLING_CLOCK_BATCH_SIZE', 100, env);
  // invoicing takes at most 500 periods a call (CreateSubscriptionInvoices).
  if (billingClockBatchSize < 1 || billingClockBatchSize > 500) throw new ConfigError('BILLING_CLOCK_BATCH_SIZE must be between 1 and 500');
  return { catalogAddress: requireEnv('CATALOG_GRPC_ADDR', env), invoicingAddress: requireEnv('INVOICING_GRPC_ADDR', env),
    usageMeteringAddress: requireEnv('USAGE_METERING_GRPC_ADDR', env), paymentsAddress: requireEnv('PAYMENTS_GRPC_ADDR', env), billingClockConcurrency, billingClockBatchSize };
}
