import { ConfigError, intEnv, optionalEnv, requireEnv } from '@recur/kernel';
import { DEFAULT_OUTBOX_RETENTION_MS } from '@recur/messaging';

const HOUR_MS = 60 * 60 * 1000;

/** What one gRPC service needs to run; from the environment, or from the single-process host. */
export interface ServiceConfig {
  databaseUrl: string;
  grpcHost: string;
  grpcPort: number;
  /** Port of the Prometheus `/metrics` server; 0 disables it (the single-process host serves one). */
  metricsPort: number;
  /** Apply pending migrations before serving (safe with several replicas: advisory lock). */
  migrateOnStart: boolean;
  /**
   * Also serve callers in this process without the loopback gRPC hop (InProcessServerGrpc). The
   * single-process host (`npm start`) sets it; a deployed app, alone in its process, has no use for it.
   */
  inProcessCalls?: boolean;
  /** Hours a published outbox row is kept before the relay deletes it (OUTBOX_RETENTION_HOURS); absent: the relay's default, 24. */
  outboxRetentionHours?: number;
}

export function serviceConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    databaseUrl: requireEnv('DATABASE_URL', env),
    grpcHost: optionalEnv('GRPC_HOST', env) ?? '0.0.0.0',
    grpcPort: intEnv('GRPC_PORT', 50051, env),
    metricsPort: intEnv('METRICS_PORT', 9464, env),
    migrateOnStart: optionalEnv('MIGRATE_ON_START', env) !== 'false',
    outboxRetentionHours: outboxRetentionHoursFromEnv(env),
  };
}

/** OUTBOX_RETENTION_HOURS, at least 1; 24 when unset. Also read by the single-process host (`npm start`). */
export function outboxRetentionHoursFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const hours = intEnv('OUTBOX_RETENTION_HOURS', DEFAULT_OUTBOX_RETENTION_MS / HOUR_MS, env);
  if (hours < 1) throw new ConfigError(`environment variable OUTBOX_RETENTION_HOURS must be at least 1, got '${hours}'`);
  return hours;
}
