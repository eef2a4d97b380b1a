import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { AddonsGrpcController } from './addons/addons.grpc.controller';
import { AddonsRepository } from './addons/addons.repository';
import { AddonsService } from './addons/addons.service';
import { CLOCK, systemClock } from '@recur/kernel';
import { CouponsGrpcController } from './coupons/coupons.grpc.controller';
import { CouponsRepository } from './coupons/coupons.repository';
import { CouponsService } from './coupons/coupons.service';
import { Commands } from './infrastructure/commands';
import { PrismaService } from './infrastructure/prisma.service';
import { PlansGrpcController } from './plans/plans.grpc.controller';
import { PlansRepository } from './plans/plans.repository';
import { PlansService } from './plans/plans.service';

/** Owns plans (tiers, price components, archive/restore/clone), add-ons, coupons and promotion codes. */
@Module({})
export class CatalogModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: CatalogModule,
      controllers: [PlansGrpcController, AddonsGrpcController, CouponsGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        Commands,
        { provide: CLOCK, useValue: systemClock },
        PlansRepository,
        PlansService,
        AddonsRepository,
        AddonsService,
        CouponsRepository,
        CouponsService,
      ],
    };
  }
}
