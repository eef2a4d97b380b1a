import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { EventLogConsumer } from './events/event-log.consumer';
import { EventsGrpcController } from './events/events.grpc.controller';
import { PrismaService } from './infrastructure/prisma.service';

@Module({})
export class WebhookDispatchModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: WebhookDispatchModule,
      controllers: [EventsGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        EventLogConsumer,
      ],
    };
  }
}
