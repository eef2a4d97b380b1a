import { PACKAGE_SIZE_MAX, PLAN_STATUSES } from '@recur/vocabulary';
import { checkMetadata, checkTaxRateIds, failedPrecondition, invalidArgument, mergeMetadata, type Metadata, newId, type TenantRef } from '@recur/kernel';
import {
  BILLING_INTERVALS,
  type BillingInterval,
  checkTiers,
  isTiered,
  PRICING_MODELS,
  type PricingModel,
  type Tier,
} from '@recur/pricing';
import { checkAmount, checkCurrency, checkDescription, checkName, checkOneOf } from '../common/fields';

export type PlanStatus = (typeof PLAN_STATUSES)[number];

/** A plan as the domain sees it; persistence and transport map to and from this. */
export interface Plan {
  id: string;
  tenant: TenantRef;
  name: string;
  description: string | null;
  pricingModel: PricingModel;
  amountMonthly: number;
  currency: string;
  packageSize: number;
  billingIntervals: BillingInterval[];
  status: PlanStatus;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
  /** The tax rates its subscriptions' lines carry (at most one); a subscription keeps those of when it was sold. */
  taxRateIds: string[];
}

export interface PlanFields {
  name?: string;
  description?: string;
  pricingModel?: string;
  amountMonthly?: number;
  currency?: string;
  packageSize?: number;
  billingIntervals?: string[];
  metadata?: Metadata;
  /** Replaces the plan's tax rates (empty clears them); undefined leaves them. */
  taxRateIds?: string[];
}

/** The fields that change what a plan costs; an archived plan refuses them (409 plan_archived). */
const PRICING_FIELDS = ['pricingModel', 'amountMonthly', 'currency', 'packageSize', 'billingIntervals'] as const;

function checkPackageSize(size: number, model: PricingModel): number {
  if (!Number.isSafeInteger(size) || size < 1 || size > PACKAGE_SIZE_MAX) {
    throw invalidArgument('package_size', `package_size must be an integer between 1 and ${PACKAGE_SIZE_MAX}`);
  }
  if (model !== 'package' && size !== 1) throw invalidArgument('package_size', 'package_size applies to the package pricing model only');
  return size;
}

function checkIntervals(intervals: string[]): BillingInterval[] {
  if (intervals.length === 0) return [...BILLING_INTERVALS];
  const checked = intervals.map((interval, index) => checkOneOf(interval, BILLING_INTERVALS, `billing_intervals[${index}]`));
  return BILLING_INTERVALS.filter((interval) => checked.includes(interval));
}

export function createPlan(tenant: TenantRef, fields: PlanFields & { name: string; pricingModel: string; amountMonthly: number }, now: Date): Plan {
  const pricingModel = checkOneOf(fields.pricingModel, PRICING_MODELS, 'pricing_model');
  return {
    id: newId('plan'),
    tenant,
    name: checkName(fields.name),
    description: checkDescription(fields.description),
    pricingModel,
    amountMonthly: checkAmount(fields.amountMonthly, 'amount_monthly'),
    currency: checkCurrency(fields.currency),
    packageSize: checkPackageSize(fields.packageSize ?? 1, pricingModel),
    billingIntervals: checkIntervals(fields.billingIntervals ?? []),
    status: 'active',
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    taxRateIds: checkTaxRateIds(fields.taxRateIds ?? [], 'tax_rates'),
  };
}

export function assertNotArchived(plan: Plan, what = 'pricing'): void {
  if (plan.status === 'archived') {
    throw failedPrecondition('plan_archived', `Plan '${plan.id}' is archived: its ${what} cannot change. Restore it first, or clone it.`);
  }
}

/**
 * Applies an update. An archived plan accepts name, description and metadata only;
 * a change of pricing fields answers 409 plan_archived.
 */
export function updatePlan(plan: Plan, fields: PlanFields, now: Date): Plan {
  if (PRICING_FIELDS.some((field) => fields[field] !== undefined)) assertNotArchived(plan);
  const pricingModel = fields.pricingModel === undefined ? plan.pricingModel : checkOneOf(fields.pricingModel, PRICING_MODELS, 'pricing_model');
  // Leaving the package model resets the package size unless one is given.
  const packageSize = fields.packageSize ?? (pricingModel === 'package' ? plan.packageSize : 1);
  return {
    ...plan,
    name: fields.name === undefined ? plan.name : checkName(fields.name),
    description: fields.description === undefined ? plan.description : checkDescription(fields.description),
    pricingModel,
    amountMonthly: fields.amountMonthly === undefined ? plan.amountMonthly : checkAmount(fields.amountMonthly, 'amount_monthly'),
    currency: fields.currency === undefined ? plan.currency : checkCurrency(fields.currency),
    packageSize: checkPackageSize(packageSize, pricingModel),
    billingIntervals: fields.billingIntervals === undefined || fields.billingIntervals.length === 0 ? plan.billingIntervals : checkIntervals(fields.billingIntervals),
    metadata: fields.metadata === undefined ? plan.metadata : checkMetadata(mergeMetadata(plan.metadata, fields.metadata)),
    // Not a pricing field: what a line costs stays; which tax it carries is the seller's to correct.
    taxRateIds: fields.taxRateIds === undefined ? plan.taxRateIds : checkTaxRateIds(fields.taxRateIds, 'tax_rates'),
    updatedAt: now,
  };
}

export function archivePlan(plan: Plan, now: Date): Plan {
  if (plan.status === 'archived') throw failedPrecondition('plan_archived', `Plan '${plan.id}' is already archived.`);
  return { ...plan, status: 'archived', archivedAt: now, updatedAt: now };
}

export function restorePlan(plan: Plan, now: Date): Plan {
  if (plan.status !== 'archived') throw failedPrecondition('plan_not_archived', `Plan '${plan.id}' is active; only an archived plan can be restored.`);
  return { ...plan, status: 'active', archivedAt: null, updatedAt: now };
}

/** A copy as a new active plan; tiers and components are copied by the service in the same transaction. */
export function clonePlan(plan: Plan, name: string | undefined, now: Date): Plan {
  return {
    ...plan,
    id: newId('plan'),
    name: checkName(name ?? `${plan.name} (copy)`.slice(0, 256)),
    status: 'active',
    metadata: { ...plan.metadata },
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
}

/** A tier set may replace a plan's tiers only on an active graduated or volume plan. */
export function replaceTiers(plan: Plan, tiers: Tier[]): Tier[] {
  assertNotArchived(plan, 'tiers');
  if (!isTiered(plan.pricingModel)) {
    throw failedPrecondition('plan_not_tiered', `Plan '${plan.id}' uses ${plan.pricingModel}; only graduated and volume plans have tiers.`);
  }
  return checkTiers(tiers);
}
