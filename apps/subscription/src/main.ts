import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startSubscriptionService, subscriptionService } from './app';

runMain('subscription', {
  migrationsDir: subscriptionService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startSubscriptionService(serviceConfigFromEnv()),
});
