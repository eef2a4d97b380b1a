import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { createRegistry, type DescMessage } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { subscriptionEventsV1, type subscriptionMessagesV1 } from '@recur/contracts';
import { CLOCK, type Clock } from '@recur/kernel';
import { claimInboxEventsSql, consumerGroup, type EventOutcome, type InternalEvent, internalEventBatchHandler, internalEventsTopic, type ReceivedInternalEvent } from '@recur/messaging';
import { PgTransactions } from '@recur/persistence';
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

/**
 * Test only (docs/operations/configuration.md): `RECUR_FAULT_USAGE_VIEWS_KILL_BEFORE_COMMIT=<n>` makes the
 * process kill itself with SIGKILL in its n-th batch transaction, after the inbox claim and the
 * views are written and before the commit, so crash tests can prove a batch cut short leaves nothing.
 */
export const FAULT_KILL_BEFORE_COMMIT = 'RECUR_FAULT_USAGE_VIEWS_KILL_BEFORE_COMMIT';

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
 * service's integration events, exactly once per event id. A batch of a partition's events is one
 * transaction on plain `pg`: one inbox claim for all, then their facts in rounds (a renewal run
 * sends one subscription.activated per renewal, so one event a transaction kept this consumer
 * the busiest process of the run: docs/performance.md). The claim and the upserts commit
 * together: a redelivered batch claims nothing and changes nothing; one cut short commits nothing.
 * Events of one subscription arrive in order (Kafka key: the subscription id); the upsert also
 * refuses facts older than the view's, so a replayed old event changes nothing.
 */
@Injectable()
export class SubscriptionEventsConsumer implements OnApplicationBootstrap {
  private readonly transactions: PgTransactions;
  private readonly killInBatch = Number(process.env[FAULT_KILL_BEFORE_COMMIT]) || undefined;
  private batchesWritten = 0;

  constructor(
    private readonly prisma: PrismaService,
    private readonly views: SubscriptionViewsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SERVICE_RUNTIME) private readonly runtime: ServiceRuntime,
  ) {
    this.transactions = new PgTransactions(prisma.pool);
  }

  async onApplicationBootstrap(): Promise<void> {
    const warn = (message: string, fields: Record<string, unknown>) => this.runtime.logger.warn(`${message} ${JSON.stringify(fields)}`);
    await this.runtime.bus.subscribeBatch(consumerGroup(CONSUMER), [internalEventsTopic('subscription')], internalEventBatchHandler(this.runtime.name, HANDLED, (events) => this.applyAll(events), { warn }));
  }

  /** One outcome per event, in order; a repeat of an id within the batch is a duplicate. */
  async applyAll(received: ReceivedInternalEvent[]): Promise<EventOutcome[]> {
    const outcomes: (EventOutcome | undefined)[] = [];
    const accepted = new Map<string, SubscriptionFacts>();
    for (const { event } of received) {
      const facts = factsOf(event);
      outcomes.push(!facts ? 'refused' : accepted.has(event.id) ? 'duplicate' : undefined);
      if (facts && !accepted.has(event.id)) accepted.set(event.id, facts);
    }
    if (accepted.size === 0) return outcomes as EventOutcome[];
    const claimed = await this.transactions
      .transaction(async (tx) => {
        const owned = new Set((await tx.query<{ event_id: string }>(claimInboxEventsSql('$1', '$2'), [CONSUMER, [...accepted.keys()]])).map((row) => row.event_id));
        await this.views.saveAll(tx, [...accepted].filter(([id]) => owned.has(id)).map(([, facts]) => facts), this.clock());
        if (++this.batchesWritten === this.killInBatch) process.kill(process.pid, 'SIGKILL');
        return owned;
      })
      .finally(() => {
        for (const { tenant, id } of accepted.values()) this.views.forget(tenant, id);
      });
    return outcomes.map((outcome, index) => outcome ?? (claimed.has(received[index].event.id) ? 'processed' : 'duplicate'));
  }
}

/** The facts an event carries, or undefined when it carries no subscription or tenant (refused). */
function factsOf(event: InternalEvent): SubscriptionFacts | undefined {
  const payload = event.payload ? anyUnpack(event.payload, HANDLED) : undefined;
  const subscription = (payload as { subscription?: subscriptionMessagesV1.Subscription } | undefined)?.subscription;
  if (!subscription || !event.tenant?.accountId) return undefined;
  return subscriptionFacts(subscription, { accountId: event.tenant.accountId, livemode: event.tenant.livemode });
}
