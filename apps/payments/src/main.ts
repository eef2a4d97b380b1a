import './instrument';
import { runMain, SERVICE_PLATFORM_MIGRATIONS, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startPaymentsService, paymentsService } from './app';

runMain('payments', {
  migrationsDir: paymentsService.migrationsDir,
  libraries: SERVICE_PLATFORM_MIGRATIONS,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startPaymentsService(serviceConfigFromEnv()),
});
