import { METRIC_NAME_PATTERN, USAGE_LIMIT_MAX } from '@recur/vocabulary';
import { invalidArgument, newId, type TenantRef } from '@recur/kernel';
import { PRICE_COMPONENT_TYPES, type PriceComponentType } from '@recur/pricing';
import { checkAmount, checkName, checkOneOf } from '../common/fields';
import { assertNotArchived, type Plan } from './plan';

/**
 * A price component of a plan (Lago's charge, Stripe's extra price): `metered` prices
 * each unit of a usage metric beyond `included_quantity` at `unit_amount`; `fixed` is a
 * recurring monthly fee of `unit_amount`. Amounts are in the plan's currency. A metered
 * component may carry `usage_limit`, the plan's limit of its metric per period (usage-metering's
 * default limit for the 80 % / 100 % alerts; a subscription's own limit overrides it).
 */
export interface PriceComponent {
  id: string;
  planId: string;
  tenant: TenantRef;
  type: PriceComponentType;
  name: string;
  metricName: string | null;
  unitAmount: number;
  includedQuantity: number;
  /** The limit of the metric per period (metered only); null for none. */
  usageLimit: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PriceComponentFields {
  type?: string;
  name?: string;
  metricName?: string;
  unitAmount?: number;
  includedQuantity?: number;
  /** A positive integer; null removes the limit (updates). */
  usageLimit?: number | null;
}

function checkMetricName(metricName: string): string {
  if (!METRIC_NAME_PATTERN.test(metricName)) {
    throw invalidArgument('metric_name', 'metric_name must be 1 to 100 characters: lowercase letters, digits, `_`, `.` or `-`, starting with a letter');
  }
  return metricName;
}

function checkUsageLimit(limit: number | null): number | null {
  if (limit === null) return null;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > USAGE_LIMIT_MAX) throw invalidArgument('usage_limit', `usage_limit must be an integer from 1 to ${USAGE_LIMIT_MAX}`);
  return limit;
}

function checkShape(component: PriceComponent): PriceComponent {
  if (component.type === 'metered' && component.metricName === null) throw invalidArgument('metric_name', 'a metered component needs a metric_name');
  if (component.type === 'fixed' && component.metricName !== null) throw invalidArgument('metric_name', 'a fixed component has no metric_name');
  if (component.type === 'fixed' && component.includedQuantity !== 0) throw invalidArgument('included_quantity', 'a fixed component has no included_quantity');
  if (component.type === 'fixed' && component.usageLimit !== null) throw invalidArgument('usage_limit', 'a fixed component has no usage_limit');
  return component;
}

export function createPriceComponent(plan: Plan, fields: PriceComponentFields & { type: string; name: string; unitAmount: number }, now: Date): PriceComponent {
  assertNotArchived(plan, 'price components');
  return checkShape({
    id: newId('pc'),
    planId: plan.id,
    tenant: plan.tenant,
    type: checkOneOf(fields.type, PRICE_COMPONENT_TYPES, 'type'),
    name: checkName(fields.name),
    metricName: fields.metricName === undefined ? null : checkMetricName(fields.metricName),
    unitAmount: checkAmount(fields.unitAmount, 'unit_amount'),
    includedQuantity: checkAmount(fields.includedQuantity ?? 0, 'included_quantity'),
    usageLimit: checkUsageLimit(fields.usageLimit ?? null),
    createdAt: now,
    updatedAt: now,
  });
}

export function updatePriceComponent(plan: Plan, component: PriceComponent, fields: PriceComponentFields, now: Date): PriceComponent {
  assertNotArchived(plan, 'price components');
  if (fields.type !== undefined && fields.type !== component.type) throw invalidArgument('type', 'the type of a price component cannot change; delete it and add another');
  return checkShape({
    ...component,
    name: fields.name === undefined ? component.name : checkName(fields.name),
    metricName: fields.metricName === undefined ? component.metricName : checkMetricName(fields.metricName),
    unitAmount: fields.unitAmount === undefined ? component.unitAmount : checkAmount(fields.unitAmount, 'unit_amount'),
    includedQuantity: fields.includedQuantity === undefined ? component.includedQuantity : checkAmount(fields.includedQuantity, 'included_quantity'),
    usageLimit: fields.usageLimit === undefined ? component.usageLimit : checkUsageLimit(fields.usageLimit),
    updatedAt: now,
  });
}

export function deletePriceComponent(plan: Plan): void {
  assertNotArchived(plan, 'price components');
}
