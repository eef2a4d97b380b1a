import { join } from 'node:path';
import { catalogV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { CatalogModule } from './catalog.module';

export const catalogService: GrpcServiceSpec = {
  name: 'catalog',
  services: [catalogV1.CatalogService],
  module: (runtime) => CatalogModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: true,
  keepsCommandResults: true,
};

export const startCatalogService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(catalogService, config, bus);
