import { type DynamicModule, Module } from '@nestjs/common';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from './infrastructure/prisma.service';

/** Owns invoices and lines, numbering, draft/open/finalize/void, PDFs, e-mail resend, credit notes and dunning. */
@Module({})
export class InvoicingModule {
  static forRuntime(runtime: ServiceRuntime): DynamicModule {
    return {
      module: InvoicingModule,
      controllers: [],
      providers: [
        { provide: SERVICE_RUNTIME, useValue: runtime },
        { provide: PrismaService, useFactory: () => new PrismaService(runtime.config.databaseUrl) },
      ],
    };
  }
}
