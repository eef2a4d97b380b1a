import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, systemClock } from '@recur/kernel';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { CustomerBalancesGrpcController } from './balances/customer-balances.grpc.controller';
import { CustomerBalancesRepository } from './balances/customer-balances.repository';
import { CustomerBalancesService } from './balances/customer-balances.service';
import { CreditNotesGrpcController } from './credit-notes/credit-notes.grpc.controller';
import { CreditNotesRepository } from './credit-notes/credit-notes.repository';
import { CreditNotesService } from './credit-notes/credit-notes.service';
import { CustomerDirectory } from './customers/customer-directory.client';
import { Commands, PlainTransactions } from './infrastructure/commands';
import { PrismaService } from './infrastructure/prisma.service';
import { InvoicesGrpcController } from './invoices/invoices.grpc.controller';
import { InvoicesRepository } from './invoices/invoices.repository';
import { InvoicesService } from './invoices/invoices.service';
import { INVOICING_CONFIG, invoicingConfigFromEnv } from './invoicing-config';
import { InvoiceMailer } from './mail/invoice-mail';
import { InvoiceMailsRepository } from './mail/invoice-mails.repository';
import { InvoiceMailsWorker } from './mail/invoice-mails.worker';
import { DunningSchedulesGrpcController } from './dunning/dunning-schedules.grpc.controller';
import { DunningSchedulesRepository } from './dunning/dunning-schedules.repository';
import { SellerProfilesGrpcController } from './seller/seller-profiles.grpc.controller';
import { SellerProfilesRepository } from './seller/seller-profiles.repository';
import { TaxRatesGrpcController } from './tax-rates/tax-rates.grpc.controller';
import { TaxRatesRepository } from './tax-rates/tax-rates.repository';
import { TaxRatesService } from './tax-rates/tax-rates.service';

/** Owns invoices and lines, numbering, draft/open/finalize/void, PDFs, e-mail resend, credit notes and dunning. */
@Module({})
export class InvoicingModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: InvoicingModule,
      controllers: [InvoicesGrpcController, CreditNotesGrpcController, DunningSchedulesGrpcController, SellerProfilesGrpcController, TaxRatesGrpcController, CustomerBalancesGrpcController],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
        { provide: INVOICING_CONFIG, useFactory: () => invoicingConfigFromEnv() },
        { provide: CLOCK, useValue: systemClock },
        Commands,
        PlainTransactions,
        CustomerDirectory,
        InvoicesRepository,
        InvoicesService,
        CreditNotesRepository,
        CreditNotesService,
        DunningSchedulesRepository,
        SellerProfilesRepository,
        InvoiceMailsRepository,
        { provide: InvoiceMailer, useExisting: InvoiceMailsRepository },
        InvoiceMailsWorker,
        TaxRatesRepository,
        TaxRatesService,
        CustomerBalancesRepository,
        CustomerBalancesService,
      ],
    };
  }
}
