import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1 } from '@recur/contracts';
import { CLOCK, type Clock } from '@recur/kernel';
import { claimInboxEvent, consumerGroup, eachInTurn, type EventOutcome, type InternalEvent, internalEventBatchHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { BillingJobs } from '../billing-clock/billing-jobs.repository';
import { PrismaService } from '../infrastructure/prisma.service';
import { SalesLinksRepository } from '../sales-links/sales-links.repository';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { activateAfterPayment } from './paid-invoice';

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'subscription.invoice-paid';
const HANDLES = createRegistry(invoicingEventsV1.InvoicePaidSchema);

/**
 * Reads invoicing's InvoicePaid: a paid renewal invoice stops its pending dunning reminders
 * and brings its past_due subscription back to active, and a paid invoice completes the sales
 * link checkout that sold its subscription (or, for a one-off invoice, the one_time sale it bills). The inbox claim and the change commit together, so a redelivered event changes
 * nothing (even after the subscription fell past due again later).
 */
@Injectable()
export class InvoicePaidConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly jobs: BillingJobs,
    private readonly salesLinks: SalesLinksRepository,
    @Inject(CLOCK) private readonly now: Clock,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    // A batch at a time: the topic carries every invoice's events, and this consumer handles few of them.
    await this.runtime.bus.subscribeBatch(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventBatchHandler(this.runtime.name, HANDLES, eachInTurn((event) => this.handle(event)), { warn }));
  }

  handle(event: InternalEvent): Promise<EventOutcome> {
    const paid = event.payload ? anyUnpack(event.payload, invoicingEventsV1.InvoicePaidSchema) : undefined;
    if (!paid || !event.tenant) return Promise.resolve('refused');
    const { invoice } = paid;
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      if (!invoice) return 'processed';
      // A one-off invoice has reminders too (its customer's), and no subscription to bring back; it may be a one_time sale's.
      if (!invoice.subscriptionId) {
        await this.jobs.cancelDunning(tx, invoice.id);
        await this.salesLinks.completeByInvoice(tx, tenant, invoice.id, this.now());
        return 'processed';
      }
      const subscription = await this.subscriptions.getForUpdate(tx, tenant, invoice.subscriptionId);
      await this.jobs.cancelDunning(tx, invoice.id);
      const change = activateAfterPayment(subscription, this.now());
      if (change.events.length > 0) await this.subscriptions.update(tx, change);
      await this.salesLinks.complete(tx, invoice.subscriptionId, this.now());
      return 'processed';
    });
  }
}
