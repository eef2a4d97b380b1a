import { join } from 'node:path';
import { subscriptionV1 } from '@recur/contracts';
import type { EventBus } from '@recur/messaging';
import { type GrpcServiceSpec, type RunningService, type ServiceConfig, startGrpcService } from '@recur/service-host';
import { SubscriptionModule } from './subscription.module';

export const subscriptionService: GrpcServiceSpec = {
  name: 'subscription',
  services: [subscriptionV1.SubscriptionService],
  module: (runtime) => SubscriptionModule.forRuntime(runtime),
  migrationsDir: join(__dirname, '..', 'prisma', 'migrations'),
  relaysOutbox: true,
  keepsCommandResults: true,
};

export const startSubscriptionService = (config: ServiceConfig, bus?: EventBus): Promise<RunningService> =>
  startGrpcService(subscriptionService, config, bus);
