import { Injectable } from '@nestjs/common';
import { notFound, type Page, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import { BillingJobs } from '../billing-clock/billing-jobs.repository';
import { PRODUCER } from '../customers/customers.repository';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Subscription, SubscriptionChange, SubscriptionStatus } from './subscription';
import { translateSubscriptionEvent } from './subscription-events.translator';
import { fromSubscriptionRow, toSubscriptionRow } from './subscription.mapper';

type Tx = Prisma.TransactionClient;

/**
 * Subscriptions in the service's database; every query is scoped to one tenant. Saving a
 * change writes, in the caller's transaction, its events (outbox), the invoice of a period it
 * began and the billing clock's next step for it, so none exists without the others.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly jobs: BillingJobs,
  ) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Subscription> {
    const row = await tx.subscription.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('subscription', id);
    return fromSubscriptionRow(row);
  }

  /** Locks the row for the rest of the transaction, so concurrent changes (and the clock) serialise. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Subscription> {
    await tx.$executeRaw`SELECT 1 FROM subscriptions WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  async list(tenant: TenantRef, page: Page, filter: { customerId?: string; status?: SubscriptionStatus }): Promise<{ subscriptions: Subscription[]; total: number }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
    };
    const [rows, total] = await Promise.all([
      this.prisma.subscription.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: page.offset, take: page.limit }),
      this.prisma.subscription.count({ where }),
    ]);
    return { subscriptions: rows.map(fromSubscriptionRow), total };
  }

  /** The subscription a cancelled one was reactivated as, if any. */
  async reactivationOf(tx: Tx, tenant: TenantRef, id: string): Promise<string | null> {
    const row = await tx.subscription.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, reactivatedFrom: id }, select: { id: true } });
    return row?.id ?? null;
  }

  async insert(tx: Tx, change: SubscriptionChange): Promise<void> {
    await tx.subscription.create({ data: toSubscriptionRow(change.subscription) });
    await this.afterSave(tx, change);
  }

  async update(tx: Tx, change: SubscriptionChange): Promise<void> {
    await tx.subscription.update({ where: { id: change.subscription.id }, data: toSubscriptionRow(change.subscription) });
    await this.afterSave(tx, change);
  }

  private async afterSave(tx: Tx, { subscription, events, invoice }: SubscriptionChange): Promise<void> {
    if (invoice) await this.jobs.queueInvoice(tx, subscription, invoice);
    await this.jobs.syncLifecycleStep(tx, subscription);
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateSubscriptionEvent));
  }
}
