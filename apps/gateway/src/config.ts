import { DEFAULT_CALL_TIMEOUT_MS } from '@recur/contracts';
import { ConfigError, intEnv, optionalEnv, requireEnv } from '@recur/kernel';
import type { AdmissionLimits } from './http/admission-control';
import type { RateLimitDefaults } from './rate-limits/rate-limiter';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** ADMIN_PORT's default: the port Prometheus scrapes on every Recur pod (the gRPC services' METRICS_PORT). */
export const DEFAULT_ADMIN_PORT = 9464;

export interface PeerAddresses {
  catalog: string;
  subscription: string;
  invoicing: string;
  payments: string;
  usageMetering: string;
  webhookDispatch: string;
}

export interface GatewayConfig {
  httpHost: string;
  httpPort: number;
  /**
   * The admin listener: `/metrics` and the operator surface (`/operator/…`), which the public port
   * (httpPort) answers 404; `/healthz` and `/readyz` are on both. Never routed by an Ingress.
   */
  adminHost: string;
  /** 0 picks a free port (RunningGateway.adminPort says which). */
  adminPort: number;
  databaseUrl: string;
  /** Bearer token of the operator surface (`/operator/…`). */
  operatorToken: string;
  peers: PeerAddresses;
  /** How long the gateway waits for a service's answer (retrying dropped connections) before it answers 503. */
  grpcDeadlineMs: number;
  migrateOnStart: boolean;
  /** Base URL of the customer portal pages; a link is `<base>/<token>`. */
  customerPortalUrl: string;
  /** How long a customer portal link works after it is made. */
  customerPortalSessionTtlSeconds: number;
  /** Base URL of the hosted checkout pages; a sales link's `url` is `<base>/<token>`. */
  salesLinkUrl: string;
  /** Requests a second per key, reads and writes each, unless the key's app sets its own (docs/api/conventions.md, Rate limits). */
  rateLimits: RateLimitDefaults;
  /** `/v1` requests this process works on at once, and the short queue before it answers 503 (docs/operations/configuration.md#admission-control). */
  admission: AdmissionLimits;
}

export function gatewayConfigFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return {
    httpHost: optionalEnv('HTTP_HOST', env) ?? '0.0.0.0',
    httpPort: intEnv('HTTP_PORT', 8080, env),
    adminHost: optionalEnv('ADMIN_HOST', env) ?? '0.0.0.0',
    adminPort: intEnv('ADMIN_PORT', DEFAULT_ADMIN_PORT, env),
    databaseUrl: requireEnv('DATABASE_URL', env),
    operatorToken: requireEnv('RECUR_OPERATOR_TOKEN', env),
    peers: {
      catalog: requireEnv('CATALOG_GRPC_ADDR', env),
      subscription: requireEnv('SUBSCRIPTION_GRPC_ADDR', env),
      invoicing: requireEnv('INVOICING_GRPC_ADDR', env),
      payments: requireEnv('PAYMENTS_GRPC_ADDR', env),
      usageMetering: requireEnv('USAGE_METERING_GRPC_ADDR', env),
      webhookDispatch: requireEnv('WEBHOOK_DISPATCH_GRPC_ADDR', env),
    },
    grpcDeadlineMs: intEnv('GATEWAY_GRPC_DEADLINE_MS', DEFAULT_CALL_TIMEOUT_MS, env),
    migrateOnStart: optionalEnv('MIGRATE_ON_START', env) !== 'false',
    customerPortalUrl: (optionalEnv('CUSTOMER_PORTAL_URL', env) ?? `http://127.0.0.1:${intEnv('HTTP_PORT', 8080, env)}/customer-portal`).replace(/\/+$/, ''),
    customerPortalSessionTtlSeconds: intEnv('CUSTOMER_PORTAL_SESSION_TTL_SECONDS', 3600, env),
    salesLinkUrl: (optionalEnv('SALES_LINK_URL', env) ?? `http://127.0.0.1:${intEnv('HTTP_PORT', 8080, env)}/buy`).replace(/\/+$/, ''),
    rateLimits: rateLimitDefaultsFromEnv(env),
    admission: admissionLimitsFromEnv(env),
  };
}

/** The most requests a second a limit may name (the operator API's bound too). */
export const RATE_LIMIT_MAX_PER_SECOND = 1_000_000;

/** The per-key rate limits of keys whose app sets none: 100 a second live, 25 sandbox, reads and writes each. */
export function rateLimitDefaultsFromEnv(env: NodeJS.ProcessEnv = process.env): RateLimitDefaults {
  return {
    livePerSecond: rateLimitEnv('RATE_LIMIT_LIVE_PER_SECOND', 100, env),
    sandboxPerSecond: rateLimitEnv('RATE_LIMIT_SANDBOX_PER_SECOND', 25, env),
  };
}

function rateLimitEnv(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const value = intEnv(name, fallback, env);
  if (value < 1 || value > RATE_LIMIT_MAX_PER_SECOND) throw new ConfigError(`environment variable ${name} must be 1 to ${RATE_LIMIT_MAX_PER_SECOND}, got '${value}'`);
  return value;
}

/** The admission control's defaults (docs/operations/configuration.md#admission-control). */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = { minInFlight: 2, maxInFlight: 64, maxQueued: 256, queueTimeoutMs: 50, overloadWaitMs: 0 };

export function admissionLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): AdmissionLimits {
  const read = (name: string, fallback: number): number => {
    const value = intEnv(name, fallback, env);
    if (value < 0) throw new ConfigError(`environment variable ${name} must be 0 or more, got '${value}'`);
    return value;
  };
  const limits = {
    minInFlight: read('ADMISSION_MIN_IN_FLIGHT', DEFAULT_ADMISSION_LIMITS.minInFlight),
    maxInFlight: read('ADMISSION_MAX_IN_FLIGHT', DEFAULT_ADMISSION_LIMITS.maxInFlight),
    maxQueued: read('ADMISSION_MAX_QUEUED', DEFAULT_ADMISSION_LIMITS.maxQueued),
    queueTimeoutMs: read('ADMISSION_QUEUE_TIMEOUT_MS', DEFAULT_ADMISSION_LIMITS.queueTimeoutMs),
    overloadWaitMs: read('ADMISSION_OVERLOAD_WAIT_MS', DEFAULT_ADMISSION_LIMITS.overloadWaitMs),
  };
  if (limits.maxInFlight > 0 && (limits.minInFlight < 1 || limits.minInFlight > limits.maxInFlight)) {
    throw new ConfigError(`environment variable ADMISSION_MIN_IN_FLIGHT must be 1 to ADMISSION_MAX_IN_FLIGHT (${limits.maxInFlight}), got '${limits.minInFlight}'`);
  }
  return limits;
}
