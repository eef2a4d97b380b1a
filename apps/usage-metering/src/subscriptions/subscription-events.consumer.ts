import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry, type DescMessage } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { subscriptionEventsV1, type subscriptionMessagesV1 } from '@recur/contracts';
import { CLOCK, type Clock } from '@recur/kernel';
import { claimInboxEvent, consumerGroup, type EventOutcome, type InternalEvent, internalEventHandler, internalEventsTopic } from '@recur/messaging';
import { SERVICE_RUNTIME, type ServiceRuntime } from '@recur/service-host';
import { PrismaService } from '../infrastructure/prisma.service';
import { type SubscriptionFacts, SubscriptionViewsRepository } from './subscription-views.repository';

/** The inbox's consumer name; the Kafka group is this name within the topic namespace. */
export const CONSUMER = 'usage-metering.subscriptions';

/** Every subscription event carries the whole subscription: each one refreshes the view. */
const SUBSCRIPTION_EVENTS: DescMessage[] = [
  subscriptionEventsV1.SubscriptionCreatedSchema,
  subscriptionEventsV1.SubscriptionUpdatedSchema,
  subscriptionEventsV1.SubscriptionTrialExtendedSchema,
  subscriptionEventsV1.SubscriptionActivatedSchema,
  subscriptionEventsV1.SubscriptionPausedSchema,
  subscriptionEventsV1.SubscriptionResumedSchema,
  subscriptionEventsV1.SubscriptionCancelledSchema,
  subscriptionEventsV1.SubscriptionCompletedSchema,
  subscriptionEventsV1.SubscriptionReactivatedSchema,
];
const HANDLED = createRegistry(...SUBSCRIPTION_EVENTS);

/** The facts usage-metering keeps of a subscription, from the event's snapshot. */
export function subscriptionFacts(subscription: subscriptionMessagesV1.Subscription, livemodeTenant: { accountId: string; livemode: boolean }): SubscriptionFacts {
  return {
    id: subscription.id,
    tenant: livemodeTenant,
    status: subscription.status,
    currentPeriod: { start: new Date(Number(subscription.currentPeriodStart) * 1000), end: new Date(Number(subscription.currentPeriodEnd) * 1000) },
    meteredComponents: (subscription.price?.components ?? [])
      .filter((component) => component.type === 'metered' && component.metricName)
      // The plan's usage_limit is the default limit; a subscription's own (usage_limits) overrides it.
      .map((component) => ({ metricName: component.metricName!, includedQuantity: Number(component.includedQuantity), usageLimit: component.usageLimit ?? null })),
    onTestClock: subscription.testClockId !== undefined,
    updated: subscription.updated,
  };
}

/**
 * Keeps the subscription read model (status, period, metered components) from the subscription
 * service's integration events, exactly once per event id: the inbox claim and the upsert commit
 * together. Events of one subscription arrive in order (Kafka key: the subscription id); the
 * upsert also refuses facts older than the view's, so a replayed old event changes nothing.
 */
@Injectable()
export class SubscriptionEventsConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly prisma: PrismaService,
    private readonly views: SubscriptionViewsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribe(consumerGroup(CONSUMER), [internalEventsTopic('subscription')], internalEventHandler(this.runtime.name, HANDLED, (event) => this.apply(event), { warn }));
  }

  apply(event: InternalEvent): Promise<EventOutcome> {
    const payload = event.payload ? anyUnpack(event.payload, HANDLED) : undefined;
    const subscription = (payload as { subscription?: subscriptionMessagesV1.Subscription } | undefined)?.subscription;
    if (!subscription || !event.tenant?.accountId) return Promise.resolve('refused');
    const tenant = { accountId: event.tenant.accountId, livemode: event.tenant.livemode };
    return this.prisma
      .$transaction(async (tx): Promise<EventOutcome> => {
        if (!(await claimInboxEvent(tx, CONSUMER, event.id))) return 'duplicate';
        await this.views.save(tx, subscriptionFacts(subscription, tenant), this.clock());
        return 'processed';
      })
      .finally(() => this.views.forget(tenant, subscription.id));
  }
}
