import { join } from 'node:path';
import { invoicingV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { InvoicingModule } from './invoicing.module';

export const invoicingService: GrpcServiceSpec = {
  name: 'invoicing',
  services: [invoicingV1.InvoicingService],
  module: (runtime) => InvoicingModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: true,
  keepsCommandResults: true,
};

export const startInvoicingService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(invoicingService, config, bus);
