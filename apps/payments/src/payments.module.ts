import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, type Clock, systemClock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { Commands } from './infrastructure/commands';
import { PrismaService } from './infrastructure/prisma.service';
import { InvoicingClient } from './invoices/invoicing.client';
import { PaymentMethodsGrpcController } from './payment-methods/payment-methods.grpc.controller';
import { PaymentMethodsRepository } from './payment-methods/payment-methods.repository';
import { PaymentMethodsService } from './payment-methods/payment-methods.service';
import { InvoiceCollectionConsumer } from './payments/invoice-collection.consumer';
import { PaymentJanitor } from './payments/payment-janitor.worker';
import { PaymentsGrpcController } from './payments/payments.grpc.controller';
import { PaymentsRepository } from './payments/payments.repository';
import { PaymentsService } from './payments/payments.service';
import { PAYMENTS_CONFIG, type PaymentsConfig, paymentsConfigFromEnv } from './payments-config';
import { PawapayAdapter } from './providers/pawapay.adapter';
import { LIVE_ADAPTER, ProviderAdapters, SANDBOX_ADAPTER } from './providers/provider-adapters.service';
import { ProviderDirectory } from './providers/provider-directory.service';
import { SandboxAdapter } from './providers/sandbox.adapter';
import { RefundWorker } from './refunds/refund.worker';
import { RefundsGrpcController } from './refunds/refunds.grpc.controller';
import { RefundsRepository } from './refunds/refunds.repository';
import { RefundsService } from './refunds/refunds.service';
import { AutoRechargeWorker } from './wallets/auto-recharge.worker';
import { WalletInvoiceEventsConsumer } from './wallets/invoice-events.consumer';
import { WalletInvoicing } from './wallets/wallet-invoicing.client';
import { WalletsGrpcController } from './wallets/wallets.grpc.controller';
import { WalletsRepository } from './wallets/wallets.repository';
import { WalletsService } from './wallets/wallets.service';

/** Owns payment initiation and attempts, provider adapters, provider callbacks, refunds at the provider and prepaid wallets. */
@Module({})
export class PaymentsModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: PaymentsModule,
      controllers: [PaymentsGrpcController, RefundsGrpcController, WalletsGrpcController, PaymentMethodsGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        { provide: PAYMENTS_CONFIG, useFactory: () => paymentsConfigFromEnv() },
        { provide: CLOCK, useValue: systemClock },
        { provide: SANDBOX_ADAPTER, inject: [PAYMENTS_CONFIG], useFactory: (config: PaymentsConfig) => new SandboxAdapter(config.pagesUrl) },
        { provide: LIVE_ADAPTER, inject: [PAYMENTS_CONFIG, CLOCK], useFactory: (config: PaymentsConfig, clock: Clock) => new PawapayAdapter(config.pawapay, clock) },
        Commands,
        ProviderAdapters,
        ProviderDirectory,
        InvoicingClient,
        PaymentsRepository,
        PaymentsService,
        RefundsRepository,
        RefundsService,
        WalletInvoicing,
        WalletsRepository,
        WalletsService,
        WalletInvoiceEventsConsumer,
        InvoiceCollectionConsumer,
        PaymentMethodsRepository,
        PaymentMethodsService,
        {
          provide: AutoRechargeWorker,
          inject: [PrismaService, WalletsRepository, WalletInvoicing, PaymentsService, CLOCK],
          useFactory: (prisma: PrismaService, wallets: WalletsRepository, invoicing: WalletInvoicing, payments: PaymentsService, clock: Clock) =>
            new AutoRechargeWorker(prisma, wallets, invoicing, payments, clock, {
              leaseMs: 30_000,
              pollMs: 1_000,
              retryDelayMs: (attempts) => Math.min(1_000 * 2 ** Math.max(0, attempts - 1), 300_000),
              databaseUrl: runtime.config.databaseUrl,
              log: (message, fields) => runtime.logger.warn(message, fields),
            }),
        },
        {
          provide: RefundWorker,
          inject: [PrismaService, RefundsService, RefundsRepository, CLOCK],
          useFactory: (prisma: PrismaService, refunds: RefundsService, repository: RefundsRepository, clock: Clock) =>
            new RefundWorker(prisma, refunds, repository, clock, { databaseUrl: runtime.config.databaseUrl, log: (message, fields) => runtime.logger.warn(message, fields) }),
        },
        {
          provide: PaymentJanitor,
          inject: [PrismaService, PaymentsService, ProviderAdapters, InvoicingClient, CLOCK, PAYMENTS_CONFIG],
          useFactory: (prisma: PrismaService, payments: PaymentsService, adapters: ProviderAdapters, invoicing: InvoicingClient, clock: Clock, config: PaymentsConfig) =>
            new PaymentJanitor(prisma, payments, adapters, invoicing, clock, {
              databaseUrl: runtime.config.databaseUrl,
              checkDelayMs: (attempts) => Math.min(config.statusCheckAfterMs * 2 ** Math.max(0, attempts - 1), 30 * 60_000),
              log: (message, fields) => runtime.logger.warn(message, fields),
            }),
        },
      ],
    };
  }
}
