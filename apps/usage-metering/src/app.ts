import { join } from 'node:path';
import { usageMeteringV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { UsageMeteringModule } from './usage-metering.module';

export const usageMeteringService: GrpcServiceSpec = {
  name: 'usage-metering',
  services: [usageMeteringV1.UsageMeteringService],
  module: (runtime) => UsageMeteringModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: true,
  keepsCommandResults: false,
};

export const startUsageMeteringService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(usageMeteringService, config, bus);
