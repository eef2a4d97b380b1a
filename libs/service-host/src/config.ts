import { intEnv, optionalEnv, requireEnv } from '@recur/kernel';

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
}

export function serviceConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    databaseUrl: requireEnv('DATABASE_URL', env),
    grpcHost: optionalEnv('GRPC_HOST', env) ?? '0.0.0.0',
    grpcPort: intEnv('GRPC_PORT', 50051, env),
    metricsPort: intEnv('METRICS_PORT', 9464, env),
    migrateOnStart: optionalEnv('MIGRATE_ON_START', env) !== 'false',
  };
}
