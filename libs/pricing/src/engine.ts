import { DomainError, failedPrecondition, invalidArgument } from '@recur/kernel';
import {
  BILLING_INTERVAL_MONTHS,
  type BillingInterval,
  isTiered,
  type PricedCoupon,
  type PricedPlan,
  type Tier,
} from './model';

/** One charge of a period. `amount` = `quantity` × `unit_amount` + `flat_amount`, in minor units. */
export interface LineItem {
  kind: 'plan' | 'tier' | 'component';
  description: string;
  quantity: number;
  unitAmount: number;
  flatAmount: number;
  amount: number;
  /** The tier's position (0-based) for tier lines. */
  tier?: number;
  /** The price component for component lines. */
  componentId?: string;
  metricName?: string;
}

export interface PeriodInput {
  plan: PricedPlan;
  /** Licensed quantity (seats, units); default 1. */
  quantity?: number;
  /** Usage of the period per metric name; metrics without usage count 0. */
  usage?: Record<string, number>;
  coupon?: PricedCoupon | null;
  interval?: BillingInterval;
}

export interface PeriodPrice {
  currency: string;
  interval: BillingInterval;
  lines: LineItem[];
  /** Sum of the lines. */
  subtotal: number;
  /** What the coupon takes off: never more than the subtotal. */
  discount: number;
  /** subtotal − discount; never negative. */
  total: number;
}

/**
 * Rounding rule: every line is a product of integers, so lines are exact. The only
 * fraction is a percentage coupon, taken once from the subtotal and rounded half up to
 * the minor unit (12.5 → 13). A discount never exceeds the subtotal, so no total is negative.
 */
export function roundHalfUp(numerator: number, denominator: number): number {
  return Math.floor((2 * numerator + denominator) / (2 * denominator));
}

function safe(value: number, param: string): number {
  if (!Number.isSafeInteger(value)) throw new DomainError('invalid_argument', 'amount_too_large', 'The computed amount exceeds the largest supported amount.', param);
  return value;
}

function line(kind: LineItem['kind'], description: string, quantity: number, unitAmount: number, flatAmount = 0, extra: Partial<LineItem> = {}): LineItem {
  return { kind, description, quantity, unitAmount, flatAmount, amount: safe(quantity * unitAmount + flatAmount, 'quantity'), ...extra };
}

/** Graduated: each tier prices the units that fall in it; a tier's flat amount applies once it is reached. */
export function graduatedLines(tiers: Tier[], quantity: number, months: number): LineItem[] {
  const lines: LineItem[] = [];
  let start = 0;
  for (const [index, tier] of tiers.entries()) {
    if (quantity <= start) break;
    const end = tier.upTo === null ? quantity : Math.min(quantity, tier.upTo);
    const units = end - start;
    lines.push(line('tier', `Tier ${index + 1} (${start + 1}–${tier.upTo ?? '∞'})`, units, tier.unitAmount * months, tier.flatAmount * months, { tier: index }));
    if (tier.upTo === null) break;
    start = tier.upTo;
  }
  return lines;
}

/** Volume: the one tier the quantity falls in prices every unit. */
export function volumeLines(tiers: Tier[], quantity: number, months: number): LineItem[] {
  if (quantity === 0) return [];
  const index = tiers.findIndex((tier) => tier.upTo === null || quantity <= tier.upTo);
  const tier = tiers[index];
  return [line('tier', `Tier ${index + 1} (up to ${tier.upTo ?? '∞'})`, quantity, tier.unitAmount * months, tier.flatAmount * months, { tier: index })];
}

function discountOf(coupon: PricedCoupon | null | undefined, subtotal: number, currency: string): number {
  if (!coupon) return 0;
  if (coupon.type === 'percentage') {
    if (!(coupon.value > 0 && coupon.value <= 100)) throw invalidArgument('coupon', 'a percentage coupon must be greater than 0 and at most 100');
    const basisPoints = Math.round(coupon.value * 100);
    return Math.min(subtotal, roundHalfUp(subtotal * basisPoints, 10_000));
  }
  if (coupon.currency !== currency) {
    throw failedPrecondition('coupon_currency_mismatch', `Coupon '${coupon.id}' is in ${coupon.currency ?? 'no currency'}, the plan in ${currency}.`);
  }
  return Math.min(subtotal, coupon.value);
}

/**
 * Prices one billing period of a plan: the plan's own charge for the quantity (by its
 * pricing model), each price component (fixed fees; metered usage beyond the included
 * quantity), then the coupon. All amounts are integers in the plan currency's minor unit.
 */
export function pricePeriod(input: PeriodInput): PeriodPrice {
  const { plan } = input;
  const quantity = input.quantity ?? 1;
  const interval = input.interval ?? 'monthly';
  const months = BILLING_INTERVAL_MONTHS[interval];
  if (months === undefined) throw invalidArgument('interval', `interval must be one of ${Object.keys(BILLING_INTERVAL_MONTHS).join(', ')}`);
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw invalidArgument('quantity', 'quantity must be a non-negative integer');
  for (const [metric, used] of Object.entries(input.usage ?? {})) {
    if (!Number.isSafeInteger(used) || used < 0) throw invalidArgument(`usage[${metric}]`, 'usage must be a non-negative integer');
  }

  const base = plan.amountMonthly * months;
  const lines: LineItem[] = [];
  switch (plan.pricingModel) {
    case 'flat_rate':
      lines.push(line('plan', plan.name, 1, base));
      break;
    case 'per_unit':
      lines.push(line('plan', plan.name, quantity, base));
      break;
    case 'package': {
      const packages = Math.ceil(quantity / plan.packageSize);
      lines.push(line('plan', `${plan.name} (${packages} × ${plan.packageSize} units)`, packages, base));
      break;
    }
    case 'graduated':
    case 'volume':
      if (plan.tiers.length === 0) throw failedPrecondition('plan_tiers_missing', `A ${plan.pricingModel} plan needs tiers before it can be priced.`);
      if (base > 0) lines.push(line('plan', plan.name, 1, base));
      lines.push(...(plan.pricingModel === 'graduated' ? graduatedLines(plan.tiers, quantity, months) : volumeLines(plan.tiers, quantity, months)));
      break;
    default:
      throw invalidArgument('pricing_model', `unknown pricing model '${String(plan.pricingModel)}'`);
  }
  if (!isTiered(plan.pricingModel) && plan.tiers.length > 0) {
    // Tiers of a non-tiered model are never priced; the catalog refuses to store them.
    throw failedPrecondition('plan_not_tiered', `A ${plan.pricingModel} plan has no tiers.`);
  }

  for (const component of plan.components) {
    if (component.type === 'fixed') {
      lines.push(line('component', component.name, 1, component.unitAmount * months, 0, { componentId: component.id }));
    } else {
      const used = input.usage?.[component.metricName ?? ''] ?? 0;
      const billable = Math.max(0, used - component.includedQuantity * months);
      lines.push(line('component', component.name, billable, component.unitAmount, 0, { componentId: component.id, metricName: component.metricName ?? undefined }));
    }
  }

  const subtotal = safe(lines.reduce((sum, item) => sum + item.amount, 0), 'quantity');
  const discount = discountOf(input.coupon, subtotal, plan.currency);
  return { currency: plan.currency, interval, lines, subtotal, discount, total: subtotal - discount };
}
