import { fromInt64 } from '@recur/money';
import type { Plan, PlanTier, PriceComponent } from '../gen/recur/catalog/v1/plan_pb';
import { priceOrDeprecated } from '../money';

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
  /** The tax rates (`txr_…`) the plan's invoice lines carry; empty when it names none. */
  tax_rates: string[];
}

export function presentPlan(plan: Plan): PlanJson {
  const price = priceOrDeprecated(plan.price, { amountMinor: plan.amountMonthly, currency: plan.currency }, 'price');
  return {
    id: plan.id,
    object: 'plan',
    livemode: plan.livemode,
    name: plan.name,
    description: plan.description ?? null,
    pricing_model: plan.pricingModel,
    amount_monthly: price.amountMinor,
    currency: price.currency,
    package_size: plan.packageSize,
    billing_intervals: [...plan.billingIntervals],
    status: plan.status,
    metadata: { ...plan.metadata },
    created: Number(plan.created),
    updated: Number(plan.updated),
    archived_at: plan.archivedAt === undefined ? null : Number(plan.archivedAt),
    tax_rates: [...plan.taxRateIds],
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
  return { up_to: fromInt64(tier.upTo, 'up_to') ?? null, unit_amount: fromInt64(tier.unitAmount, 'unit_amount'), flat_amount: fromInt64(tier.flatAmount, 'flat_amount') };
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
  /** The plan's limit of the metric per period (metered only); null for none. */
  usage_limit: number | null;
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
    unit_amount: fromInt64(component.unitAmount, 'unit_amount'),
    included_quantity: fromInt64(component.includedQuantity, 'included_quantity'),
    usage_limit: component.usageLimit === undefined ? null : fromInt64(component.usageLimit, 'usage_limit'),
    created: Number(component.created),
    updated: Number(component.updated),
  };
}
