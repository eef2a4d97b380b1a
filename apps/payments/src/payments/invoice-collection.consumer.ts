import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1 } from '@recur/contracts';
import { claimInboxEvent, consumerGroup, type EventOutcome, type InternalEvent, internalEventHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from '../infrastructure/prisma.service';
import { PaymentsService } from './payments.service';

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'payments.collection';
const HANDLES = createRegistry(invoicingEventsV1.InvoiceVoidedSchema, invoicingEventsV1.InvoicePaidSchema);

/**
 * One invoice, one collection: when invoicing says an invoice stopped owing money — voided
 * (InvoiceVoided) or paid (InvoicePaid, by a payment or a wallet) — its pending payments are
 * canceled where their provider allows it, so a payer page opened earlier refuses Approve. Each
 * event once (the inbox claim commits with the cancels).
 */
@Injectable()
export class InvoiceCollectionConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly payments: PaymentsService,
    private readonly prisma: PrismaService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventHandler(this.runtime.name, HANDLES, (event) => this.handle(event), { warn }));
  }

  handle(event: InternalEvent): Promise<EventOutcome> {
    if (!event.payload || !event.tenant) return Promise.resolve('refused');
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    const voided = event.payload.typeUrl.endsWith(invoicingEventsV1.InvoiceVoidedSchema.typeName);
    const invoice = voided ? anyUnpack(event.payload, invoicingEventsV1.InvoiceVoidedSchema)?.invoice : anyUnpack(event.payload, invoicingEventsV1.InvoicePaidSchema)?.invoice;
    if (!invoice) return Promise.resolve('refused');
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      await this.payments.cancelPendingOfInvoice(tx, tenant, invoice.id, voided ? 'invoice_void' : 'invoice_paid');
      return 'processed';
    }, { maxWait: 10_000, timeout: 15_000 });
  }
}
