import type { Plan, PlanTier, PriceComponent } from '../gen/recur/catalog/v1/plan_pb';

/** The public JSON of a plan: what `/v1/plans` answers. Times are unix seconds, amounts minor units. */
export interface PlanJson {
  id: string;
  object: 'plan';
  livemode: boolean;
  name: string;
  description: string | null;
  pricing_model: string;
  amount_monthly: number;
  currency: string;
  package_size: number;
  billing_intervals: string[];
  status: string;
  metadata: Record<string, string>;
  created: number;
  updated: number;
  archived_at: number | null;
}

export function presentPlan(plan: Plan): PlanJson {
  return {
    id: plan.id,
    object: 'plan',
    livemode: plan.livemode,
    name: plan.name,
    description: plan.description ?? null,
    pricing_model: plan.pricingModel,
    amount_monthly: Number(plan.amountMonthly),
    currency: plan.currency,
    package_size: plan.packageSize,
    billing_intervals: [...plan.billingIntervals],
    status: plan.status,
    metadata: { ...plan.metadata },
    created: Number(plan.created),
    updated: Number(plan.updated),
    archived_at: plan.archivedAt === undefined ? null : Number(plan.archivedAt),
  };
}

/** One tier as the API shows it; `up_to: null` is the open-ended last tier. */
export interface PlanTierJson {
  up_to: number | null;
  unit_amount: number;
  flat_amount: number;
}

/** `GET`/`PUT /v1/plans/:id/tiers`: the whole set, lowest first (never paged; at most 50). */
export interface PlanTiersJson {
  object: 'plan_tiers';
  plan: string;
  tiers: PlanTierJson[];
}

export function presentPlanTier(tier: PlanTier): PlanTierJson {
  return { up_to: tier.upTo === undefined ? null : Number(tier.upTo), unit_amount: Number(tier.unitAmount), flat_amount: Number(tier.flatAmount) };
}

export function presentPlanTiers(planId: string, tiers: PlanTier[]): PlanTiersJson {
  return { object: 'plan_tiers', plan: planId, tiers: tiers.map(presentPlanTier) };
}

/** The public JSON of a price component. */
export interface PriceComponentJson {
  id: string;
  object: 'price_component';
  livemode: boolean;
  plan: string;
  type: string;
  name: string;
  metric_name: string | null;
  unit_amount: number;
  included_quantity: number;
  created: number;
  updated: number;
}

export function presentPriceComponent(component: PriceComponent): PriceComponentJson {
  return {
    id: component.id,
    object: 'price_component',
    livemode: component.livemode,
    plan: component.planId,
    type: component.type,
    name: component.name,
    metric_name: component.metricName ?? null,
    unit_amount: Number(component.unitAmount),
    included_quantity: Number(component.includedQuantity),
    created: Number(component.created),
    updated: Number(component.updated),
  };
}
