import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1 } from '@recur/contracts';
import { claimInboxEvent, consumerGroup, type EventOutcome, type InternalEvent, internalEventHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { BillingJobs } from '../billing-clock/billing-jobs.repository';
import { PrismaService } from '../infrastructure/prisma.service';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'subscription.invoice-payment-failed';
const HANDLES = createRegistry(invoicingEventsV1.InvoicePaymentFailedSchema);

/**
 * Reads invoicing's InvoicePaymentFailed: a failed renewal invoice's reminders become steps of
 * the billing clock (kind `dunning`), one per day of the schedule the event carries (the
 * account's, decided by invoicing), counted from the subscription's own time — so a test
 * clock walks them. The inbox claim and the steps commit together; each step's key is unique
 * besides, so a redelivered failure queues nothing twice. One-off invoices (no subscription)
 * have no billing clock to run them and are not chased (README, Dunning).
 */
@Injectable()
export class InvoicePaymentFailedConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly jobs: BillingJobs,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventHandler(this.runtime.name, HANDLES, (event) => this.handle(event), { warn }));
  }

  handle(event: InternalEvent): Promise<EventOutcome> {
    const failed = event.payload ? anyUnpack(event.payload, invoicingEventsV1.InvoicePaymentFailedSchema) : undefined;
    if (!failed || !event.tenant) return Promise.resolve('refused');
    const { invoice, dunningScheduleDays } = failed;
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      if (!invoice?.subscriptionId || dunningScheduleDays.length === 0) return 'processed';
      const subscription = await this.subscriptions.getForUpdate(tx, tenant, invoice.subscriptionId);
      await this.jobs.queueDunning(tx, subscription, invoice.id, dunningScheduleDays, await this.jobs.timeOf(tx, subscription));
      return 'processed';
    });
  }
}
