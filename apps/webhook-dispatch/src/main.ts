import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startWebhookDispatchService, webhookDispatchService } from './app';

runMain('webhook-dispatch', {
  migrationsDir: webhookDispatchService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startWebhookDispatchService(serviceConfigFromEnv()),
});
