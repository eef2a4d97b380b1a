import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { isSubscribableEventType } from '@recur/vocabulary';
import { claimInboxEvent, consumerGroup, type EventOutcome, type PublicEvent, publicEventHandler, publicEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { PrismaService } from '../infrastructure/prisma.service';

/** The services whose public events webhook-dispatch records and delivers (their `.public` topics only). */
export const PRODUCERS = ['subscription', 'invoicing', 'payments', 'usage-metering'];
/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'webhook-dispatch.event-log';

/**
 * Records every public event in the event log and queues its deliveries, exactly once per
 * event id: the inbox claim, the insert and the deliveries commit together, so a
 * redelivered event changes nothing. It reads only the producers' public topics, and
 * still refuses any event whose type is not one of the specification's subscribable
 * types (`webhook.test` included: webhook-dispatch makes those itself), so nothing
 * internal can reach the event log or an endpoint.
 */
@Injectable()
export class EventLogConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly deliveries: DeliveriesService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const topics = PRODUCERS.map((producer) => publicEventsTopic(producer));
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), topics, publicEventHandler(this.runtime.name, (event) => this.record(event), { warn }));
  }

  record(event: PublicEvent): Promise<EventOutcome> {
    if (!isSubscribableEventType(event.type) || !event.accountId) return Promise.resolve('refused');
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
      await tx.event.create({
        data: { id: event.id, accountId: event.accountId, livemode: event.livemode, type: event.type, created: event.created, data: event.data ?? {} },
      });
      await this.deliveries.fanOut(tx, { id: event.id, type: event.type, account_id: event.accountId, livemode: event.livemode });
      return 'processed';
    });
  }
}
