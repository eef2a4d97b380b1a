import type * as grpc from '@grpc/grpc-js';
import { createServiceClient, ERROR_CODE_TRAILER, ERROR_PARAM_TRAILER, type ServiceClient } from '@recur/contracts';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { type AppName, type AppProcess, startApp } from './app-process';
import { createTestDatabase } from './infrastructure';
import { freePort } from './ports';

export interface ServiceUnderTest<S> {
  app: AppProcess;
  client: ServiceClient<S>;
  /** `127.0.0.1:<port>`, for a peer that calls this service. */
  grpcAddress: string;
  databaseUrl: string;
  grpcPort: number;
  metricsPort: number;
  stop(): Promise<void>;
}

/**
 * One service as its own process on a fresh database, with a client of its gRPC surface.
 * Events go through the service's in-process bus (no Kafka) unless `env` says otherwise. A
 * `GRPC_PORT` in `env` (a freePort() reserved earlier) lets two services name each other.
 */
export async function startServiceUnderTest<S extends GenService<GenServiceMethods>>(
  app: Exclude<AppName, 'gateway'>,
  service: S,
  env: Record<string, string> = {},
): Promise<ServiceUnderTest<S>> {
  const [databaseUrl, grpcPort, metricsPort] = await Promise.all([createTestDatabase(app.replace(/-/g, '_')), env.GRPC_PORT ? Number(env.GRPC_PORT) : freePort(), freePort()]);
  const process = await startApp(app, {
    env: { DATABASE_URL: databaseUrl, GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort), METRICS_PORT: String(metricsPort), KAFKA_BROKERS: '', ...env },
    ready: { grpcPort },
  });
  const address = `127.0.0.1:${grpcPort}`;
  const client = createServiceClient(service, address);
  return {
    app: process,
    client,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    databaseUrl,
    grpcPort,
    metricsPort,
    async stop() {
      client.close();
      await process.kill('SIGTERM');
    },
  };
}

export interface GrpcFailure {
  code: grpc.status;
  errorCode?: string;
  param?: string;
}

/** Awaits a call that must fail and returns its status and Recur error trailers. */
export async function grpcFailure(call: Promise<unknown>): Promise<GrpcFailure> {
  try {
    await call;
  } catch (error) {
    const serviceError = error as grpc.ServiceError;
    return {
      code: serviceError.code,
      errorCode: serviceError.metadata?.get(ERROR_CODE_TRAILER)[0]?.toString(),
      param: serviceError.metadata?.get(ERROR_PARAM_TRAILER)[0]?.toString(),
    };
  }
  throw new Error('expected the call to fail');
}

/**
 * Environment for an invoicing service whose test is not about e-mail: finalizing sends no
 * mail, and the required SMTP_URL names a port nothing listens on (a resend would stay pending).
 */
export const NO_INVOICE_MAIL: Record<string, string> = { SMTP_URL: 'smtp://127.0.0.1:9', INVOICE_MAIL_ON_FINALIZE: 'false' };
