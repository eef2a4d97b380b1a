import './instrument';
import { runMain, SERVICE_PLATFORM_MIGRATIONS, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startInvoicingService, invoicingService } from './app';

runMain('invoicing', {
  migrationsDir: invoicingService.migrationsDir,
  libraries: SERVICE_PLATFORM_MIGRATIONS,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startInvoicingService(serviceConfigFromEnv()),
});
