import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from './infrastructure/prisma.service';

/** Owns usage records, aggregation per period, limits and 80 %/100 % alerts. */
@Module({})
export class UsageMeteringModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: UsageMeteringModule,
      controllers: [],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
      ],
    };
  }
}
