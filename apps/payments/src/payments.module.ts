import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from './infrastructure/prisma.service';

/** Owns payment initiation and attempts, provider adapters, provider callbacks, refunds at the provider and prepaid wallets. */
@Module({})
export class PaymentsModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: PaymentsModule,
      controllers: [],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
      ],
    };
  }
}
