import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { CustomersGrpcController } from './customers/customers.grpc.controller';
import { CustomersRepository } from './customers/customers.repository';
import { CLOCK, systemClock } from '@recur/kernel';
import { CustomersService } from './customers/customers.service';
import { Commands } from './infrastructure/commands';
import { PrismaService } from './infrastructure/prisma.service';

@Module({})
export class SubscriptionModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: SubscriptionModule,
      controllers: [CustomersGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        Commands,
        { provide: CLOCK, useValue: systemClock },
        CustomersRepository,
        CustomersService,
      ],
    };
  }
}
