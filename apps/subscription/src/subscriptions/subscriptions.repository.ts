import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import { fromSqlRow, NEWEST_FIRST, type OpenTransaction, readListPage, statementsOf, updateRowsStatement } from '@recur/persistence';
import { BillingJobs } from '../billing-clock/billing-jobs.repository';
import { PRODUCER } from '../customers/customers.repository';
import { Prisma, type Subscription as SubscriptionRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Subscription, SubscriptionChange, SubscriptionStatus } from './subscription';
import { translateSubscriptionEvent } from './subscription-events.translator';
import { fromSubscriptionRow, toSubscriptionRow } from './subscription.mapper';

type Tx = Prisma.TransactionClient;

/**
 * Subscriptions in the service's database; every query is scoped to one tenant. Saving a
 * change writes, in the caller's transaction, its events (outbox), the invoice of a period it
 * began and the billing clock's next step for it, so none exists without the others. The
 * writes are set-based (one statement each for any number of subscriptions), on either kind of
 * transaction: a command's Prisma one or the billing clock's batch on plain `pg`.
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

  async list(tenant: TenantRef, page: Page, filter: { customerId?: string; status?: SubscriptionStatus }): Promise<{ subscriptions: Subscription[]; page: PageInfo }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
    };
    const { rows, page: info } = await readListPage(page, {
      resource: 'subscription', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.subscription.findMany(read),
      count: (query) => this.prisma.subscription.count(query),
    });
    return { subscriptions: rows.map(fromSubscriptionRow), page: info };
  }

  /** The subscription a cancelled one was reactivated as, if any. */
  async reactivationOf(tx: Tx, tenant: TenantRef, id: string): Promise<string | null> {
    const row = await tx.subscription.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, reactivatedFrom: id }, select: { id: true } });
    return row?.id ?? null;
  }

  async insert(tx: Tx, change: SubscriptionChange): Promise<void> {
    await tx.subscription.create({ data: toSubscriptionRow(change.subscription) });
    await this.afterSave(tx, [change]);
  }

  async update(tx: OpenTransaction, change: SubscriptionChange): Promise<void> {
    await this.updateAll(tx, [change]);
  }

  /**
   * Locks the subscriptions (in id order, so two lockers never wait on each other in a cycle)
   * and reads them, in one statement: the billing clock's batch. A subscription of another
   * tenant, or none, is absent from the answer.
   */
  async lockAll(tx: OpenTransaction, refs: readonly { tenant: TenantRef; id: string }[]): Promise<Map<string, Subscription>> {
    const rows = await statementsOf(tx).query<Record<string, unknown>>(
      `SELECT s.* FROM subscriptions s JOIN jsonb_to_recordset($1::jsonb) AS ref(id text, account_id text, livemode boolean)
         ON s.id = ref.id AND s.account_id = ref.account_id AND s.livemode = ref.livemode
       ORDER BY s.id FOR UPDATE OF s`,
      [JSON.stringify(refs.map(({ tenant, id }) => ({ id, account_id: tenant.accountId, livemode: tenant.livemode })))],
    );
    return new Map(rows.map((row) => fromSubscriptionRow(fromSqlRow<SubscriptionRow>(row))).map((subscription) => [subscription.id, subscription]));
  }

  /**
   * Saves changed subscriptions (each at most once) in a fixed number of statements: their rows,
   * then afterSave's. One statement per kind of write, whatever the count, so a batch of the
   * billing clock costs about what one renewal does.
   */
  async updateAll(tx: OpenTransaction, changes: readonly SubscriptionChange[]): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map(({ subscription }) =>
      Object.fromEntries(Object.entries(toSubscriptionRow(subscription)).map(([field, value]) => [field, value === Prisma.DbNull ? null : value])));
    const { sql, values } = updateRowsStatement('subscriptions', rows);
    await statementsOf(tx).execute(sql, values);
    await this.afterSave(tx, changes);
  }

  private async afterSave(tx: OpenTransaction, changes: readonly SubscriptionChange[]): Promise<void> {
    await this.jobs.syncSteps(tx, changes);
    await appendToOutbox(tx, PRODUCER, changes.flatMap(({ events }) => events.flatMap(translateSubscriptionEvent)));
  }
}
