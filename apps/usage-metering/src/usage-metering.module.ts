import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, intEnv, systemClock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PeriodUsageGrpcController } from './billing/period-usage.grpc.controller';
import { PeriodUsageRepository } from './billing/period-usage.repository';
import { PeriodUsageService } from './billing/period-usage.service';
import { PrismaService } from './infrastructure/prisma.service';
import { SubscriptionEventsConsumer } from './subscriptions/subscription-events.consumer';
import { SubscriptionViewsRepository, USAGE_CACHE_MS } from './subscriptions/subscription-views.repository';
import { UsageGrpcController } from './usage/usage.grpc.controller';
import { UsageRepository } from './usage/usage.repository';
import { UsageService } from './usage/usage.service';

/** Owns usage records, aggregation per period, limits and 80 %/100 % alerts. */
@Module({})
export class UsageMeteringModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: UsageMeteringModule,
      controllers: [UsageGrpcController, PeriodUsageGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        { provide: CLOCK, useValue: systemClock },
        { provide: USAGE_CACHE_MS, useFactory: () => intEnv('USAGE_CACHE_MS', 1000) },
        SubscriptionViewsRepository,
        SubscriptionEventsConsumer,
        UsageRepository,
        UsageService,
        PeriodUsageRepository,
        PeriodUsageService,
      ],
    };
  }
}
