import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, newId, type Page, type TenantRef } from '@recur/kernel';
import { isTiered, type Tier } from '@recur/pricing';
import { createOnce } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { archivePlan, clonePlan, createPlan, type Plan, type PlanFields, type PlanStatus, replaceTiers, restorePlan, updatePlan } from './plan';
import { PlansRepository } from './plans.repository';
import {
  createPriceComponent,
  deletePriceComponent,
  type PriceComponent,
  type PriceComponentFields,
  updatePriceComponent,
} from './price-component';

/**
 * Plan use cases. Each change of a plan, its tiers or its components runs in one
 * transaction holding the plan's row lock, so an invalid request changes nothing and
 * concurrent edits of one plan serialise. The catalog publishes no public events.
 */
@Injectable()
export class PlansService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly plans: PlansRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  create(tenant: TenantRef, fields: PlanFields & { name: string; pricingModel: string; amountMonthly: number }, requestId: string | null): Promise<Plan> {
    return createOnce(requestId, (id) => this.plans.findByRequestId(tenant, id), async () => {
      const plan = createPlan(tenant, fields, this.now());
      await this.prisma.$transaction((tx) => this.plans.insert(tx, plan, requestId));
      return plan;
    });
  }

  get(tenant: TenantRef, id: string): Promise<Plan> {
    return this.plans.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, status?: PlanStatus): Promise<{ plans: Plan[]; total: number }> {
    return this.plans.list(tenant, page, status);
  }

  /** Switching to a model without tiers drops the plan's tiers in the same transaction. */
  update(tenant: TenantRef, id: string, fields: PlanFields): Promise<Plan> {
    return this.prisma.$transaction(async (tx) => {
      const before = await this.plans.getForUpdate(tx, tenant, id);
      const after = updatePlan(before, fields, this.now());
      await this.plans.update(tx, after);
      if (isTiered(before.pricingModel) && !isTiered(after.pricingModel)) await this.plans.replaceTiers(tx, after, []);
      return after;
    });
  }

  archive(tenant: TenantRef, id: string): Promise<Plan> {
    return this.prisma.$transaction(async (tx) => {
      const archived = archivePlan(await this.plans.getForUpdate(tx, tenant, id), this.now());
      await this.plans.update(tx, archived);
      return archived;
    });
  }

  restore(tenant: TenantRef, id: string): Promise<Plan> {
    return this.prisma.$transaction(async (tx) => {
      const restored = restorePlan(await this.plans.getForUpdate(tx, tenant, id), this.now());
      await this.plans.update(tx, restored);
      return restored;
    });
  }

  /** Copies the plan, its tiers and its price components (new ids) into a new active plan. */
  clone(tenant: TenantRef, id: string, name: string | undefined, requestId: string | null): Promise<Plan> {
    return createOnce(requestId, (earlier) => this.plans.findByRequestId(tenant, earlier), () =>
      this.prisma.$transaction(async (tx) => {
        const original = await this.plans.getForUpdate(tx, tenant, id);
        const now = this.now();
        const copy = clonePlan(original, name, now);
        await this.plans.insert(tx, copy, requestId);
        await this.plans.replaceTiers(tx, copy, await this.plans.tiers(tenant, original.id, tx));
        const { components } = await this.plans.components(tenant, original.id, undefined, tx);
        for (const component of components) {
          await this.plans.insertComponent(tx, { ...component, id: newId('pc'), planId: copy.id, createdAt: now, updatedAt: now }, null);
        }
        return copy;
      }),
    );
  }

  async tiers(tenant: TenantRef, id: string): Promise<Tier[]> {
    const plan = await this.plans.get(tenant, id);
    return this.plans.tiers(tenant, plan.id);
  }

  replaceTiers(tenant: TenantRef, id: string, tiers: Tier[]): Promise<Tier[]> {
    return this.prisma.$transaction(async (tx) => {
      const plan = await this.plans.getForUpdate(tx, tenant, id);
      const checked = replaceTiers(plan, tiers);
      await this.plans.replaceTiers(tx, plan, checked);
      await this.plans.update(tx, { ...plan, updatedAt: this.now() });
      return checked;
    });
  }

  async components(tenant: TenantRef, planId: string, page: Page): Promise<{ components: PriceComponent[]; total: number }> {
    await this.plans.get(tenant, planId);
    return this.plans.components(tenant, planId, page);
  }

  createComponent(tenant: TenantRef, planId: string, fields: PriceComponentFields & { type: string; name: string; unitAmount: number }, requestId: string | null): Promise<PriceComponent> {
    return createOnce(requestId, (earlier) => this.plans.findComponentByRequestId(tenant, earlier), () =>
      this.prisma.$transaction(async (tx) => {
        const plan = await this.plans.getForUpdate(tx, tenant, planId);
        const component = createPriceComponent(plan, fields, this.now());
        await this.plans.insertComponent(tx, component, requestId);
        return component;
      }),
    );
  }

  updateComponent(tenant: TenantRef, planId: string, id: string, fields: PriceComponentFields): Promise<PriceComponent> {
    return this.prisma.$transaction(async (tx) => {
      const plan = await this.plans.getForUpdate(tx, tenant, planId);
      const component = await this.plans.component(tx, tenant, planId, id);
      const updated = updatePriceComponent(plan, component, fields, this.now());
      await this.plans.updateComponent(tx, updated);
      return updated;
    });
  }

  deleteComponent(tenant: TenantRef, planId: string, id: string): Promise<PriceComponent> {
    return this.prisma.$transaction(async (tx) => {
      const plan = await this.plans.getForUpdate(tx, tenant, planId);
      const component = await this.plans.component(tx, tenant, planId, id);
      deletePriceComponent(plan);
      await this.plans.deleteComponent(tx, component);
      return component;
    });
  }
}
