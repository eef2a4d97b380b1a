import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, type Clock, systemClock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { BillingClock } from './billing-clock/billing-clock.worker';
import { BillingJobs } from './billing-clock/billing-jobs.repository';
import { InvoicingClient } from './billing-clock/invoicing.client';
import { PaymentsClient } from './billing-clock/payments.client';
import { UsageMeteringClient } from './billing-clock/usage-metering.client';
import { CustomersGrpcController } from './customers/customers.grpc.controller';
import { CustomersRepository } from './customers/customers.repository';
import { CustomersService } from './customers/customers.service';
import { Commands, PgCommands } from './infrastructure/commands';
import { InvoicePaidConsumer } from './invoice-payments/invoice-paid.consumer';
import { InvoicePaymentFailedConsumer } from './invoice-payments/invoice-payment-failed.consumer';
import { PrismaService } from './infrastructure/prisma.service';
import { SalesLinkInvoicing } from './sales-links/sales-link-invoicing.client';
import { SalesLinksGrpcController } from './sales-links/sales-links.grpc.controller';
import { SalesLinksRepository } from './sales-links/sales-links.repository';
import { SalesLinksService } from './sales-links/sales-links.service';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig, subscriptionConfigFromEnv } from './subscription-config';
import { CatalogPlans } from './subscriptions/catalog-plans.client';
import { SubscriptionsGrpcController } from './subscriptions/subscriptions.grpc.controller';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';
import { SubscriptionsService } from './subscriptions/subscriptions.service';
import { TestClocksGrpcController } from './test-clocks/test-clocks.grpc.controller';
import { TestClocksRepository } from './test-clocks/test-clocks.repository';
import { TestClocksService } from './test-clocks/test-clocks.service';

@Module({})
export class SubscriptionModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: SubscriptionModule,
      controllers: [CustomersGrpcController, SubscriptionsGrpcController, TestClocksGrpcController, SalesLinksGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: SUBSCRIPTION_CONFIG, useFactory: () => subscriptionConfigFromEnv() },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        Commands,
        PgCommands,
        { provide: CLOCK, useValue: systemClock },
        CustomersRepository,
        CustomersService,
        TestClocksRepository,
        TestClocksService,
        CatalogPlans,
        BillingJobs,
        SubscriptionsRepository,
        SubscriptionsService,
        SalesLinksRepository,
        SalesLinksService,
        SalesLinkInvoicing,
        InvoicingClient,
        UsageMeteringClient,
        PaymentsClient,
        InvoicePaidConsumer,
        InvoicePaymentFailedConsumer,
        {
          provide: BillingClock,
          inject: [PrismaService, SubscriptionsRepository, InvoicingClient, CLOCK, SUBSCRIPTION_CONFIG, UsageMeteringClient, PaymentsClient],
          useFactory: (prisma: PrismaService, subscriptions: SubscriptionsRepository, invoicing: InvoicingClient, clock: Clock, config: SubscriptionConfig, usage: UsageMeteringClient, collection: PaymentsClient) =>
            new BillingClock(prisma, subscriptions, invoicing, clock, {
              usage,
              collection,
              concurrency: config.billingClockConcurrency,
              batchSize: config.billingClockBatchSize,
              databaseUrl: runtime.config.databaseUrl,
              log: (message, fields) => runtime.logger.warn(message, fields),
            }),
        },
      ],
    };
  }
}
