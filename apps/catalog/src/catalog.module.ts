import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from './infrastructure/prisma.service';

/** Owns plans (tiers, price components, archive/restore/clone), add-ons, coupons and promotion codes. */
@Module({})
export class CatalogModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: CatalogModule,
      controllers: [],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
      ],
    };
  }
}
