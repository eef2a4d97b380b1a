import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { invoicingEventsV1 } from '@recur/contracts';
import { claimInboxEvent, consumerGroup, eachInTurn, type EventOutcome, type InternalEvent, internalEventBatchHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { BillingJobs, customerOwner, subscriptionOwner } from '../billing-clock/billing-jobs.repository';
import { CustomersRepository } from '../customers/customers.repository';
import { PrismaService } from '../infrastructure/prisma.service';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'subscription.invoice-payment-failed';
const HANDLES = createRegistry(invoicingEventsV1.InvoicePaymentFailedSchema);

/**
 * Reads invoicing's InvoicePaymentFailed. A failed automatic charge with retries still planned
 * (`payment_retry_at`, smart retries: docs/api/dunning.md#smart-retries) queues them as steps
 * of the billing clock, and the reminders wait for the last one. Otherwise a failed invoice's reminders become steps of the
 * billing clock (kind `dunning`), one per day of the schedule the event carries (the
 * account's, decided by invoicing), counted from the subscription's own time — or, for a
 * one-off invoice (no subscription), its customer's — so a test clock walks them. The inbox
 * claim and the steps commit together; each step's key is unique besides, so a redelivered
 * failure queues nothing twice.
 */
@Injectable()
export class InvoicePaymentFailedConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly customers: CustomersRepository,
    private readonly jobs: BillingJobs,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    // A batch at a time: the topic carries every invoice's events, and this consumer handles few of them.
    await this.runtime.bus.subscribeBatch(consumerGroup(CONSUMER), [internalEventsTopic('invoicing')], internalEventBatchHandler(this.runtime.name, HANDLES, eachInTurn((event) => this.handle(event)), { warn }));
  }

  handle(event: InternalEvent): Promise<EventOutcome> {
    const failed = event.payload ? anyUnpack(event.payload, invoicingEventsV1.InvoicePaymentFailedSchema) : undefined;
    if (!failed || !event.tenant) return Promise.resolve('refused');
    const { invoice, dunningScheduleDays, paymentRetryAt, attemptCount, failedAt } = failed;
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      if (!invoice) return 'processed';
      if (paymentRetryAt.length === 0) {
        // No automatic attempt left (or a failure no retry would pass): any still queued stops, the reminders start.
        await this.jobs.cancelPaymentRetries(tx, invoice.id);
        if (dunningScheduleDays.length === 0) return 'processed';
      }
      const owner = invoice.subscriptionId
        ? subscriptionOwner(await this.subscriptions.getForUpdate(tx, tenant, invoice.subscriptionId))
        : customerOwner(await this.customers.get(tenant, invoice.customerId, tx));
      if (paymentRetryAt.length > 0) {
        const retryAt = paymentRetryAt.map((seconds) => new Date(Number(seconds) * 1_000));
        await this.jobs.queuePaymentRetries(tx, owner, invoice.id, retryAt, attemptCount + 1, dunningScheduleDays);
      } else {
        // From the failure's own time (invoicing sends it for every failure; releases before it, only
        // for an automatic charge's), so a test clock advanced before this event is read does not push
        // the reminders later.
        const from = failedAt > 0n ? new Date(Number(failedAt) * 1_000) : await this.jobs.timeOf(tx, owner);
        await this.jobs.queueDunning(tx, owner, invoice.id, dunningScheduleDays, from);
      }
      return 'processed';
    });
  }
}
