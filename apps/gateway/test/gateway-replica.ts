import { type AppProcess, freePort, startApp } from '@recur/testing';

/** A gateway replica as its own process: its public address, and its admin listener's (/operator/…). */
export interface GatewayReplica {
  process: AppProcess;
  baseUrl: string;
  adminUrl: string;
}

/**
 * Starts a gateway on `databaseUrl` with no service behind it (every peer address leads nowhere):
 * for tests of what the gateway answers itself (keys, rate limits, the operator surface). `env`
 * adds to its environment.
 */
export async function startGatewayReplica(databaseUrl: string, operatorToken: string, env: Record<string, string> = {}): Promise<GatewayReplica> {
  const httpPort = await freePort();
  const adminPort = await freePort();
  const nowhere = '127.0.0.1:9';
  const app = await startApp('gateway', {
    env: {
      DATABASE_URL: databaseUrl, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), RECUR_OPERATOR_TOKEN: operatorToken, ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort),
      CATALOG_GRPC_ADDR: nowhere, SUBSCRIPTION_GRPC_ADDR: nowhere, INVOICING_GRPC_ADDR: nowhere, PAYMENTS_GRPC_ADDR: nowhere, USAGE_METERING_GRPC_ADDR: nowhere, WEBHOOK_DISPATCH_GRPC_ADDR: nowhere,
      ...env,
    },
    ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
  });
  return { process: app, baseUrl: `http://127.0.0.1:${httpPort}`, adminUrl: `http://127.0.0.1:${adminPort}` };
}
