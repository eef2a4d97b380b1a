import './instrument';
import { requireEnv } from '@recur/kernel';
import { runMain } from '@recur/service-host';
import { GATEWAY_MIGRATIONS_DIR, startGateway } from './app';
import { gatewayConfigFromEnv } from './config';

runMain('gateway', {
  migrationsDir: GATEWAY_MIGRATIONS_DIR,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startGateway(gatewayConfigFromEnv()),
});
