import { join } from 'node:path';
import { webhookDispatchV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { WebhookDispatchModule } from './webhook-dispatch.module';

export const webhookDispatchService: GrpcServiceSpec = {
  name: 'webhook-dispatch',
  services: [webhookDispatchV1.WebhookDispatchService],
  module: (runtime) => WebhookDispatchModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: false,
  keepsCommandResults: true,
};

export const startWebhookDispatchService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(webhookDispatchService, config, bus);
