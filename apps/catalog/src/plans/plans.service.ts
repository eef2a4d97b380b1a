import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, newId, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { isTiered, type Tier } from '@recur/pricing';
import type { Prisma } from '../generated/prisma/client';
import { archivePlan, clonePlan, createPlan, type Plan, type PlanFields, type PlanStatus, replaceTiers, restorePlan, updatePlan } from './plan';
import { PlansRepository } from './plans.repository';
import {
  createPriceComponent,
  deletePriceComponent,
  type PriceComponent,
  type PriceComponentFields,
  updatePriceComponent,
} from './price-component';

type Tx = Prisma.TransactionClient;

/**
 * Plan use cases. Each change of a plan, its tiers or its components runs in the command's
 * transaction (`tx`, opened by the gRPC edge with the record of its answer) holding the plan's
 * row lock, so an invalid request changes nothing and concurrent edits of one plan serialise.
 * The catalog publishes no public events.
 */
@Injectable()
export class PlansService {
  constructor(
    private readonly plans: PlansRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: PlanFields & { name: string; pricingModel: string; amountMonthly: number }): Promise<Plan> {
    const plan = createPlan(tenant, fields, this.now());
    await this.plans.insert(tx, plan);
    return plan;
  }

  get(tenant: TenantRef, id: string): Promise<Plan> {
    return this.plans.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, status?: PlanStatus): Promise<{ plans: Plan[]; page: PageInfo }> {
    return this.plans.list(tenant, page, status);
  }

  /** Switching to a model without tiers drops the plan's tiers in the same transaction. */
  async update(tx: Tx, tenant: TenantRef, id: string, fields: PlanFields): Promise<Plan> {
    const before = await this.plans.getForUpdate(tx, tenant, id);
    const after = updatePlan(before, fields, this.now());
    await this.plans.update(tx, after);
    if (isTiered(before.pricingModel) && !isTiered(after.pricingModel)) await this.plans.replaceTiers(tx, after, []);
    return after;
  }

  async archive(tx: Tx, tenant: TenantRef, id: string): Promise<Plan> {
    const archived = archivePlan(await this.plans.getForUpdate(tx, tenant, id), this.now());
    await this.plans.update(tx, archived);
    return archived;
  }

  async restore(tx: Tx, tenant: TenantRef, id: string): Promise<Plan> {
    const restored = restorePlan(await this.plans.getForUpdate(tx, tenant, id), this.now());
    await this.plans.update(tx, restored);
    return restored;
  }

  /** Copies the plan, its tiers and its price components (new ids) into a new active plan. */
  async clone(tx: Tx, tenant: TenantRef, id: string, name: string | undefined): Promise<Plan> {
    const original = await this.plans.getForUpdate(tx, tenant, id);
    const now = this.now();
    const copy = clonePlan(original, name, now);
    await this.plans.insert(tx, copy);
    await this.plans.replaceTiers(tx, copy, await this.plans.tiers(tenant, original.id, tx));
    const { components } = await this.plans.components(tenant, original.id, undefined, tx);
    for (const component of components) {
      await this.plans.insertComponent(tx, { ...component, id: newId('pc'), planId: copy.id, createdAt: now, updatedAt: now });
    }
    return copy;
  }

  async tiers(tenant: TenantRef, id: string): Promise<Tier[]> {
    const plan = await this.plans.get(tenant, id);
    return this.plans.tiers(tenant, plan.id);
  }

  async replaceTiers(tx: Tx, tenant: TenantRef, id: string, tiers: Tier[]): Promise<Tier[]> {
    const plan = await this.plans.getForUpdate(tx, tenant, id);
    const checked = replaceTiers(plan, tiers);
    await this.plans.replaceTiers(tx, plan, checked);
    await this.plans.update(tx, { ...plan, updatedAt: this.now() });
    return checked;
  }

  /** A plan with its tiers and all its price components (GetSellablePlan): three queries at once, as the three RPCs it replaces made them. */
  async sellable(tenant: TenantRef, id: string): Promise<{ plan: Plan; tiers: Tier[]; components: PriceComponent[] }> {
    const [plan, tiers, { components }] = await Promise.all([this.plans.get(tenant, id), this.plans.tiers(tenant, id), this.plans.components(tenant, id)]);
    return { plan, tiers, components };
  }

  async components(tenant: TenantRef, planId: string, page: Page): Promise<{ components: PriceComponent[]; page: PageInfo }> {
    await this.plans.get(tenant, planId);
    return this.plans.components(tenant, planId, page);
  }

  async createComponent(tx: Tx, tenant: TenantRef, planId: string, fields: PriceComponentFields & { type: string; name: string; unitAmount: number }): Promise<PriceComponent> {
    const plan = await this.plans.getForUpdate(tx, tenant, planId);
    const component = createPriceComponent(plan, fields, this.now());
    await this.plans.insertComponent(tx, component);
    return component;
  }

  async updateComponent(tx: Tx, tenant: TenantRef, planId: string, id: string, fields: PriceComponentFields): Promise<PriceComponent> {
    const plan = await this.plans.getForUpdate(tx, tenant, planId);
    const component = await this.plans.component(tx, tenant, planId, id);
    const updated = updatePriceComponent(plan, component, fields, this.now());
    await this.plans.updateComponent(tx, updated);
    return updated;
  }

  async deleteComponent(tx: Tx, tenant: TenantRef, planId: string, id: string): Promise<PriceComponent> {
    const plan = await this.plans.getForUpdate(tx, tenant, planId);
    const component = await this.plans.component(tx, tenant, planId, id);
    deletePriceComponent(plan);
    await this.plans.deleteComponent(tx, component);
    return component;
  }
}
