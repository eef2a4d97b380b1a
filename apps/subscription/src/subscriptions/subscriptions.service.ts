import { Injectable } from '@nestjs/common';
import { failedPrecondition, invalidArgument, type Metadata, type Page, type TenantRef } from '@recur/kernel';
import { CustomersRepository } from '../customers/customers.repository';
import type { Prisma } from '../generated/prisma/client';
import { TestClocksRepository } from '../test-clocks/test-clocks.repository';
import { CatalogPlans } from './catalog-plans.client';
import {
  cancelAtPeriodEnd,
  cancelNow,
  createSubscription,
  extendTrial,
  keep,
  pause,
  reactivate,
  resume,
  SUBSCRIPTION_STATUSES,
  type Subscription,
  type SubscriptionStatus,
} from './subscription';
import { SubscriptionsRepository } from './subscriptions.repository';

type Tx = Prisma.TransactionClient;

export interface CreateSubscriptionInput {
  customerId: string;
  planId: string;
  billingInterval: string;
  quantity?: number;
  trialDays?: number;
  trialEnd?: Date;
  billingCycles?: number;
  metadata?: Metadata;
}

/**
 * Subscription use cases. Each reads the subscription's own time (its customer's test clock,
 * or the injected clock), applies one rule of the aggregate and saves the change in the
 * command's transaction (`tx`) with its events, its invoice and the clock's next step.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly customers: CustomersRepository,
    private readonly clocks: TestClocksRepository,
    private readonly catalog: CatalogPlans,
  ) {}

  async create(tx: Tx, tenant: TenantRef, input: CreateSubscriptionInput): Promise<Subscription> {
    if (!input.customerId) throw invalidArgument('customer', 'customer is required', 'parameter_missing');
    if (!input.planId) throw invalidArgument('plan', 'plan is required', 'parameter_missing');
    const customer = await this.customers.getForUpdate(tx, tenant, input.customerId).catch(() => {
      throw invalidArgument('customer', `No such customer: '${input.customerId}'`, 'resource_missing');
    });
    if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot subscribe.`);
    const plan = await this.catalog.sellable(tenant, input.planId);
    const now = await this.clocks.timeOf(tx, customer.testClockId);
    const change = createSubscription(tenant, {
      ...input,
      price: plan.price,
      planIntervals: plan.billingIntervals,
      testClockId: customer.testClockId,
    }, now);
    await this.subscriptions.insert(tx, change);
    return change.subscription;
  }

  get(tenant: TenantRef, id: string): Promise<Subscription> {
    return this.subscriptions.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, filter: { customerId?: string; status?: string }): Promise<{ subscriptions: Subscription[]; total: number }> {
    if (filter.status !== undefined && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(filter.status)) {
      throw invalidArgument('status', `status must be one of ${SUBSCRIPTION_STATUSES.join(', ')}`);
    }
    return this.subscriptions.list(tenant, page, { customerId: filter.customerId, status: filter.status as SubscriptionStatus | undefined });
  }

  async cancel(tx: Tx, tenant: TenantRef, id: string, atPeriodEnd: boolean): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => (atPeriodEnd ? cancelAtPeriodEnd(subscription, now) : cancelNow(subscription, now)));
  }

  async pause(tx: Tx, tenant: TenantRef, id: string, resumeAt: Date | null): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => pause(subscription, resumeAt, now));
  }

  async resume(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => resume(subscription, now, now));
  }

  async extendTrial(tx: Tx, tenant: TenantRef, id: string, trialEnd: Date): Promise<Subscription> {
    return this.change(tx, tenant, id, (subscription, now) => extendTrial(subscription, trialEnd, now));
  }

  /**
   * A subscription set to end at its period's end is kept; a cancelled one comes back as a
   * new subscription (once: a second reactivation of the same one is refused).
   */
  async reactivate(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    const old = await this.subscriptions.getForUpdate(tx, tenant, id);
    const now = await this.clocks.timeOf(tx, old.testClockId);
    if (old.status !== 'cancelled') {
      const change = keep(old, now);
      await this.subscriptions.update(tx, change);
      return change.subscription;
    }
    const earlier = await this.subscriptions.reactivationOf(tx, tenant, old.id);
    if (earlier) throw failedPrecondition('subscription_already_reactivated', `Subscription '${old.id}' was already reactivated as '${earlier}'.`);
    const customer = await this.customers.getForUpdate(tx, tenant, old.customerId);
    if (customer.deletedAt) throw failedPrecondition('customer_deleted', `Customer '${customer.id}' is deleted and cannot subscribe.`);
    const change = reactivate(old, now);
    await this.subscriptions.insert(tx, change);
    return change.subscription;
  }

  private async change(tx: Tx, tenant: TenantRef, id: string, rule: (subscription: Subscription, now: Date) => ReturnType<typeof cancelNow>): Promise<Subscription> {
    const subscription = await this.subscriptions.getForUpdate(tx, tenant, id);
    const change = rule(subscription, await this.clocks.timeOf(tx, subscription.testClockId));
    await this.subscriptions.update(tx, change);
    return change.subscription;
  }
}
