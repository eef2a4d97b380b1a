import { create } from '@bufbuild/protobuf';
import { planV1, toMoneyMessage } from '@recur/contracts';
import { fromInt64, money, toInt64 } from '@recur/money';
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
    amountMonthly: fromInt64(row.amountMonthly),
    currency: row.currency,
    packageSize: row.packageSize,
    billingIntervals: row.billingIntervals as BillingInterval[],
    status: row.status as PlanStatus,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    archivedAt: row.archivedAt,
    taxRateIds: row.taxRateIds,
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
    amountMonthly: toInt64(plan.amountMonthly),
    currency: plan.currency,
    packageSize: plan.packageSize,
    billingIntervals: plan.billingIntervals,
    status: plan.status,
    metadata: plan.metadata,
    createdAt: plan.createdAt,
    updatedAt: plan.updatedAt,
    archivedAt: plan.archivedAt,
    taxRateIds: plan.taxRateIds,
  };
}

export function fromTierRow(row: PlanTierRow): Tier {
  return { upTo: row.upTo === null ? null : fromInt64(row.upTo), unitAmount: fromInt64(row.unitAmount), flatAmount: fromInt64(row.flatAmount) };
}

export function fromPriceComponentRow(row: PriceComponentRow): PriceComponent {
  return {
    id: row.id,
    planId: row.planId,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    type: row.type as PriceComponentType,
    name: row.name,
    metricName: row.metricName,
    unitAmount: fromInt64(row.unitAmount),
    includedQuantity: fromInt64(row.includedQuantity),
    usageLimit: row.usageLimit === null ? null : fromInt64(row.usageLimit),
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
    unitAmount: toInt64(component.unitAmount),
    includedQuantity: toInt64(component.includedQuantity),
    usageLimit: component.usageLimit === null ? null : toInt64(component.usageLimit),
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
    amountMonthly: toInt64(plan.amountMonthly),
    currency: plan.currency,
    price: toMoneyMessage(money(plan.amountMonthly, plan.currency)),
    packageSize: plan.packageSize,
    billingIntervals: plan.billingIntervals,
    status: plan.status,
    metadata: plan.metadata,
    created: BigInt(unixSeconds(plan.createdAt)),
    updated: BigInt(unixSeconds(plan.updatedAt)),
    archivedAt: plan.archivedAt ? BigInt(unixSeconds(plan.archivedAt)) : undefined,
    taxRateIds: plan.taxRateIds,
  });
}

export function toTierMessage(tier: Tier): planV1.PlanTier {
  return create(planV1.PlanTierSchema, {
    upTo: tier.upTo === null ? undefined : toInt64(tier.upTo),
    unitAmount: toInt64(tier.unitAmount),
    flatAmount: toInt64(tier.flatAmount),
  });
}

/** `param` names the tier (`tiers[1]`) so a value beyond a number's exact range is reported on its field. */
export function fromTierMessage(tier: planV1.PlanTier, param: string): Tier {
  return { upTo: fromInt64(tier.upTo, `${param}.up_to`) ?? null, unitAmount: fromInt64(tier.unitAmount, `${param}.unit_amount`), flatAmount: fromInt64(tier.flatAmount, `${param}.flat_amount`) };
}

export function toPriceComponentMessage(component: PriceComponent): planV1.PriceComponent {
  return create(planV1.PriceComponentSchema, {
    id: component.id,
    planId: component.planId,
    livemode: component.tenant.livemode,
    type: component.type,
    name: component.name,
    metricName: component.metricName ?? undefined,
    unitAmount: toInt64(component.unitAmount),
    includedQuantity: toInt64(component.includedQuantity),
    usageLimit: component.usageLimit === null ? undefined : toInt64(component.usageLimit),
    created: BigInt(unixSeconds(component.createdAt)),
    updated: BigInt(unixSeconds(component.updatedAt)),
  });
}
