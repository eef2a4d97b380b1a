import './instrument';
import { runMain, SERVICE_PLATFORM_MIGRATIONS, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startWebhookDispatchService, webhookDispatchService } from './app';

runMain('webhook-dispatch', {
  migrationsDir: webhookDispatchService.migrationsDir,
  libraries: SERVICE_PLATFORM_MIGRATIONS,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startWebhookDispatchService(serviceConfigFromEnv()),
});
