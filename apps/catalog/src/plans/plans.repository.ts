import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, OLDEST_FIRST, readListPage } from '@recur/persistence';
import { toInt64 } from '@recur/money';
import type { Tier } from '@recur/pricing';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Plan, PlanStatus } from './plan';
import { fromPlanRow, fromPriceComponentRow, fromTierRow, toPlanRow, toPriceComponentRow } from './plan.mapper';
import type { PriceComponent } from './price-component';

type Tx = Prisma.TransactionClient;

/** Plans, their tiers and price components; every query is scoped to one tenant. */
@Injectable()
export class PlansRepository {
  constructor(private readonly prisma: PrismaService) {}

  private scope(tenant: TenantRef) {
    return { accountId: tenant.accountId, livemode: tenant.livemode };
  }

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Plan> {
    const row = await tx.plan.findFirst({ where: { id, ...this.scope(tenant) } });
    if (!row) throw notFound('plan', id);
    return fromPlanRow(row);
  }

  /** Locks the plan for the rest of the transaction, so concurrent changes of it and its children serialise. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Plan> {
    await tx.$executeRaw`SELECT 1 FROM plans WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }


  async list(tenant: TenantRef, page: Page, status?: PlanStatus): Promise<{ plans: Plan[]; page: PageInfo }> {
    const where = { ...this.scope(tenant), ...(status === undefined ? {} : { status }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'plan', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.plan.findMany(read),
      count: (query) => this.prisma.plan.count(query),
    });
    return { plans: rows.map(fromPlanRow), page: info };
  }

  async insert(tx: Tx, plan: Plan): Promise<void> {
    await tx.plan.create({ data: toPlanRow(plan) });
  }

  async update(tx: Tx, plan: Plan): Promise<void> {
    const { name, description, pricingModel, amountMonthly, currency, packageSize, billingIntervals, status, metadata, updatedAt, archivedAt, taxRateIds } = toPlanRow(plan);
    await tx.plan.update({
      where: { id: plan.id },
      data: { name, description, pricingModel, amountMonthly, currency, packageSize, billingIntervals, status, metadata, updatedAt, archivedAt, taxRateIds },
    });
  }

  async tiers(tenant: TenantRef, planId: string, tx: Tx = this.prisma): Promise<Tier[]> {
    const rows = await tx.planTier.findMany({ where: { planId, ...this.scope(tenant) }, orderBy: { position: 'asc' } });
    return rows.map(fromTierRow);
  }

  async replaceTiers(tx: Tx, plan: Plan, tiers: Tier[]): Promise<void> {
    await tx.planTier.deleteMany({ where: { planId: plan.id, ...this.scope(plan.tenant) } });
    if (tiers.length === 0) return;
    await tx.planTier.createMany({
      data: tiers.map((tier, position) => ({
        planId: plan.id,
        ...this.scope(plan.tenant),
        position,
        upTo: tier.upTo === null ? null : toInt64(tier.upTo),
        unitAmount: toInt64(tier.unitAmount),
        flatAmount: toInt64(tier.flatAmount),
      })),
    });
  }

  async components(tenant: TenantRef, planId: string, page?: Page, tx: Tx = this.prisma): Promise<{ components: PriceComponent[]; page: PageInfo }> {
    const where = { planId, ...this.scope(tenant) };
    if (page === undefined) {
      const rows = await tx.priceComponent.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      return { components: rows.map(fromPriceComponentRow), page: { total: rows.length, hasMore: false, cursor: '' } };
    }
    const { rows, page: info } = await readListPage(page, {
      resource: 'price component', order: OLDEST_FIRST, where, cursorScope: this.scope(tenant),
      findMany: (read) => tx.priceComponent.findMany(read),
      count: (query) => tx.priceComponent.count(query),
    });
    return { components: rows.map(fromPriceComponentRow), page: info };
  }

  async component(tx: Tx, tenant: TenantRef, planId: string, id: string): Promise<PriceComponent> {
    const row = await tx.priceComponent.findFirst({ where: { id, planId, ...this.scope(tenant) } });
    if (!row) throw notFound('price component', id);
    return fromPriceComponentRow(row);
  }


  async insertComponent(tx: Tx, component: PriceComponent): Promise<void> {
    await tx.priceComponent.create({ data: toPriceComponentRow(component) });
  }

  async updateComponent(tx: Tx, component: PriceComponent): Promise<void> {
    const { name, metricName, unitAmount, includedQuantity, usageLimit, updatedAt } = toPriceComponentRow(component);
    await tx.priceComponent.update({ where: { id: component.id }, data: { name, metricName, unitAmount, includedQuantity, usageLimit, updatedAt } });
  }

  async deleteComponent(tx: Tx, component: PriceComponent): Promise<void> {
    await tx.priceComponent.delete({ where: { id: component.id } });
  }
}
