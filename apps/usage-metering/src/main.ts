import './instrument';
import { runMain, SERVICE_PLATFORM_MIGRATIONS, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startUsageMeteringService, usageMeteringService } from './app';

runMain('usage-metering', {
  migrationsDir: usageMeteringService.migrationsDir,
  libraries: SERVICE_PLATFORM_MIGRATIONS,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startUsageMeteringService(serviceConfigFromEnv()),
});
