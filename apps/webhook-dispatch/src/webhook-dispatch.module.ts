import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, systemClock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryDispatcher } from './deliveries/delivery-dispatcher';
import { EndpointsService } from './endpoints/endpoints.service';
import { EventLogConsumer } from './events/event-log.consumer';
import { EventsGrpcController } from './events/events.grpc.controller';
import { Commands } from './infrastructure/commands';
import { PrismaService } from './infrastructure/prisma.service';
import { WEBHOOK_CONFIG } from './tokens';
import { webhookConfigFromEnv } from './webhook-config';
import { WebhooksGrpcController } from './webhooks.grpc.controller';

@Module({})
export class WebhookDispatchModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: WebhookDispatchModule,
      controllers: [EventsGrpcController, WebhooksGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: CLOCK, useValue: systemClock },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        Commands,
        { provide: WEBHOOK_CONFIG, useFactory: () => webhookConfigFromEnv() },
        EndpointsService,
        DeliveriesService,
        EventLogConsumer,
        DeliveryDispatcher,
      ],
    };
  }
}
