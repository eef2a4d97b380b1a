import './instrument';
import { runMain, SERVICE_PLATFORM_MIGRATIONS, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startSubscriptionService, subscriptionService } from './app';

runMain('subscription', {
  migrationsDir: subscriptionService.migrationsDir,
  libraries: SERVICE_PLATFORM_MIGRATIONS,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startSubscriptionService(serviceConfigFromEnv()),
});
