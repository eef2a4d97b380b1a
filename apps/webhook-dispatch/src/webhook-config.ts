import { intEnv, optionalEnv } from '@recur/kernel';

/** Delivery settings, from the environment (docs/operations/configuration.md). */
export interface WebhookConfig {
  /** How long a receiver has to answer; the specification's 30 seconds by default. */
  timeoutMs: number;
  /** Operator setting: allow endpoint URLs on private, loopback and link-local addresses. */
  allowPrivateUrls: boolean;
  /** How many deliveries one worker sends at once. */
  concurrency: number;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;

export function webhookConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  return {
    timeoutMs: intEnv('WEBHOOK_TIMEOUT_MS', DEFAULT_WEBHOOK_TIMEOUT_MS, env),
    allowPrivateUrls: optionalEnv('WEBHOOK_ALLOW_PRIVATE_URLS', env) === 'true',
    concurrency: intEnv('WEBHOOK_CONCURRENCY', 32, env),
  };
}
