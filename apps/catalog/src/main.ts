import './instrument';
import { runMain, serviceConfigFromEnv } from '@recur/service-host';
import { requireEnv } from '@recur/kernel';
import { startCatalogService, catalogService } from './app';

runMain('catalog', {
  migrationsDir: catalogService.migrationsDir,
  databaseUrl: () => requireEnv('DATABASE_URL'),
  start: () => startCatalogService(serviceConfigFromEnv()),
});
