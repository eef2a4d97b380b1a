import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { claimInboxEvent, consumerGroup, eventHandler, eventsTopic, type IntegrationEvent } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import type { Prisma } from '../generated/prisma/client';
import { DeliveriesService } from '../deliveries/deliveries.service';
import { PrismaService } from '../infrastructure/prisma.service';

/** The services whose public events webhook-dispatch records and delivers. */
export const PRODUCERS = ['subscription', 'invoicing', 'payments', 'usage-metering'];
/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'webhook-dispatch.event-log';

/**
 * Records every public event in the event log and queues its deliveries, exactly once per
 * event id: the inbox claim, the insert and the deliveries commit together, so a
 * redelivered event changes nothing.
 */
@Injectable()
export class EventLogConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly deliveries: DeliveriesService,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const topics = PRODUCERS.map((producer) => eventsTopic(producer));
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), topics, eventHandler(this.runtime.name, (event) => this.record(event)));
  }

  /** Returns false when the event was already recorded. */
  record(event: IntegrationEvent): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return false;
      await tx.event.create({
        data: {
          id: event.id,
          accountId: event.account_id,
          livemode: event.livemode,
          type: event.type,
          created: BigInt(event.created),
          data: event.data as Prisma.InputJsonObject,
        },
      });
      await this.deliveries.fanOut(tx, event);
      return true;
    });
  }
}
