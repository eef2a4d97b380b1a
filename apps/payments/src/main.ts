import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startPaymentsService, paymentsService } from './app';

runMain('payments', {
  migrationsDir: paymentsService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startPaymentsService(serviceConfigFromEnv()),
});
