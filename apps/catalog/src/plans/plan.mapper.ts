import { create } from '@bufbuild/protobuf';
import { planV1 } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import type { BillingInterval, PriceComponentType, PricingModel, Tier } from '@recur/pricing';
import type { Plan as PlanRow, PlanTier as PlanTierRow, PriceComponent as PriceComponentRow, Prisma } from '../generated/prisma/client';
import type { Plan, PlanStatus } from './plan';
import type { PriceComponent } from './price-component';

export function fromPlanRow(row: PlanRow): Plan {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    name: row.name,
    description: row.description,
    pricingModel: row.pricingModel as PricingModel,
    amountMonthly: Number(row.amountMonthly),
    currency: row.currency,
    packageSize: row.packageSize,
    billingIntervals: row.billingIntervals as BillingInterval[],
    status: row.status as PlanStatus,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    archivedAt: row.archivedAt,
  };
}

export function toPlanRow(plan: Plan): Prisma.PlanUncheckedCreateInput {
  return {
    id: plan.id,
    accountId: plan.tenant.accountId,
    livemode: plan.tenant.livemode,
    name: plan.name,
    description: plan.description,
    pricingModel: plan.pricingModel,
    amountMonthly: BigInt(plan.amountMonthly),
    currency: plan.currency,
    packageSize: plan.packageSize,
    billingIntervals: plan.billingIntervals,
    status: plan.status,
    metadata: plan.metadata,
    createdAt: plan.createdAt,
    updatedAt: plan.updatedAt,
    archivedAt: plan.archivedAt,
  };
}

export function fromTierRow(row: PlanTierRow): Tier {
  return { upTo: row.upTo === null ? null : Number(row.upTo), unitAmount: Number(row.unitAmount), flatAmount: Number(row.flatAmount) };
}

export function fromPriceComponentRow(row: PriceComponentRow): PriceComponent {
  return {
    id: row.id,
    planId: row.planId,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    type: row.type as PriceComponentType,
    name: row.name,
    metricName: row.metricName,
    unitAmount: Number(row.unitAmount),
    includedQuantity: Number(row.includedQuantity),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toPriceComponentRow(component: PriceComponent): Prisma.PriceComponentUncheckedCreateInput {
  return {
    id: component.id,
    planId: component.planId,
    accountId: component.tenant.accountId,
    livemode: component.tenant.livemode,
    type: component.type,
    name: component.name,
    metricName: component.metricName,
    unitAmount: BigInt(component.unitAmount),
    includedQuantity: BigInt(component.includedQuantity),
    createdAt: component.createdAt,
    updatedAt: component.updatedAt,
  };
}

export function toPlanMessage(plan: Plan): planV1.Plan {
  return create(planV1.PlanSchema, {
    id: plan.id,
    livemode: plan.tenant.livemode,
    name: plan.name,
    description: plan.description ?? undefined,
    pricingModel: plan.pricingModel,
    amountMonthly: BigInt(plan.amountMonthly),
    currency: plan.currency,
    packageSize: plan.packageSize,
    billingIntervals: plan.billingIntervals,
    status: plan.status,
    metadata: plan.metadata,
    created: BigInt(unixSeconds(plan.createdAt)),
    updated: BigInt(unixSeconds(plan.updatedAt)),
    archivedAt: plan.archivedAt ? BigInt(unixSeconds(plan.archivedAt)) : undefined,
  });
}

export function toTierMessage(tier: Tier): planV1.PlanTier {
  return create(planV1.PlanTierSchema, {
    upTo: tier.upTo === null ? undefined : BigInt(tier.upTo),
    unitAmount: BigInt(tier.unitAmount),
    flatAmount: BigInt(tier.flatAmount),
  });
}

/** bigint → number for validation; out-of-range values stay unsafe and fail the amount checks. */
export function fromTierMessage(tier: planV1.PlanTier): Tier {
  return { upTo: tier.upTo === undefined ? null : Number(tier.upTo), unitAmount: Number(tier.unitAmount), flatAmount: Number(tier.flatAmount) };
}

export function toPriceComponentMessage(component: PriceComponent): planV1.PriceComponent {
  return create(planV1.PriceComponentSchema, {
    id: component.id,
    planId: component.planId,
    livemode: component.tenant.livemode,
    type: component.type,
    name: component.name,
    metricName: component.metricName ?? undefined,
    unitAmount: BigInt(component.unitAmount),
    includedQuantity: BigInt(component.includedQuantity),
    created: BigInt(unixSeconds(component.createdAt)),
    updated: BigInt(unixSeconds(component.updatedAt)),
  });
}
