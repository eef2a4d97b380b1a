import { join } from 'node:path';
import { paymentsV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { PaymentsModule } from './payments.module';

export const paymentsService: GrpcServiceSpec = {
  name: 'payments',
  services: [paymentsV1.PaymentsService],
  module: (runtime) => PaymentsModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: true,
  keepsCommandResults: false,
};

export const startPaymentsService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(paymentsService, config, bus);
