import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startUsageMeteringService, usageMeteringService } from './app';

runMain('usage-metering', {
  migrationsDir: usageMeteringService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startUsageMeteringService(serviceConfigFromEnv()),
});
