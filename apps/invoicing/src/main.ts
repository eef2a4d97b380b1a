import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startInvoicingService, invoicingService } from './app';

runMain('invoicing', {
  migrationsDir: invoicingService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startInvoicingService(serviceConfigFromEnv()),
});
