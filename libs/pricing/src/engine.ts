import { failedPrecondition, invalidArgument } from '@recur/kernel';
import { add, type Money, min, money, multiply, percentOf, subtract, sum } from '@recur/money';
import {
  BILLING_INTERVAL_MONTHS,
  type BillingInterval,
  isTiered,
  type PricedAddOn,
  type PricedAdjustment,
  type PricedCoupon,
  type PricedPlan,
  type Tier,
} from './model';
import { type UsageCharge, type UsagePeriod, usageLine } from './usage';

/** One charge of a period. `amount` = `quantity` × `unit_amount` + `flat_amount`, in minor units. */
export interface LineItem {
  kind: 'plan' | 'tier' | 'component' | 'addon' | 'adjustment';
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
  /** The period a usage line's units were used in (metered lines bill in arrears). */
  period?: UsagePeriod;
  /** The add-on for add-on lines. */
  addonId?: string;
  /**
   * The tax rates the line carries to its invoice (the plan's for its own, tier, component and
   * usage lines; the add-on's or the adjustment's for theirs); absent when they name none, and
   * the invoice's other rules choose (docs/api/tax-rates.md#which-rate-applies).
   */
  taxRateIds?: string[];
}

export interface PeriodInput {
  plan: PricedPlan;
  /** Licensed quantity (seats, units); default 1. */
  quantity?: number;
  /**
   * Usage billed in arrears, per metric and period (the period that ended, and late records of
   * earlier ones), each priced by its metered component. The plan's own metered components
   * add nothing else: a period's usage is known only once it ends.
   */
  usage?: UsageCharge[];
  coupon?: PricedCoupon | null;
  interval?: BillingInterval;
  /** Add-ons billed beside the plan, each priced monthly × the interval's months × its quantity. */
  addOns?: PricedAddOn[];
  /** One-time amounts billed with the period (prorations, carried credit); may be negative. */
  adjustments?: PricedAdjustment[];
  /**
   * `carry` (default): credit beyond the charges is carried out by a last line, so the subtotal
   * is 0. `keep`: the subtotal and total stay negative and nothing is discounted — a final
   * invoice, whose negative total becomes customer balance (docs/api/subscriptions.md#final-invoice).
   */
  creditBeyondCharges?: 'carry' | 'keep';
}

export interface PeriodPrice {
  currency: string;
  interval: BillingInterval;
  lines: LineItem[];
  /** Sum of the lines. */
  subtotal: number;
  /** What the coupon takes off: never more than the subtotal. */
  discount: number;
  /** subtotal − discount; never negative unless `creditBeyondCharges: 'keep'`. */
  total: number;
  /**
   * Credit the lines could not use: when credits (negative adjustments) exceed the charges,
   * a last `adjustment` line carries the difference out so the subtotal is 0, and this is
   * that difference (positive), for the caller to credit on a later period. 0 otherwise.
   */
  creditCarried: number;
}

/** The description of the line that carries unused credit out of a period. */
export const CREDIT_CARRIED_DESCRIPTION = 'Unused credit carried to the next invoice';

/** A monthly price in minor units for a period of `months`. */
const monthly = (amountMinor: number, currency: string, months: number): Money => multiply(money(amountMinor, currency), months);

/** One charge: `quantity` × the unit price plus the flat amount, exact (no rounding). */
function line(kind: LineItem['kind'], description: string, quantity: number, unitPrice: Money, flat: Money, extra: Partial<LineItem> = {}): LineItem {
  const amount = add(multiply(unitPrice, quantity), flat);
  return { kind, description, quantity, unitAmount: unitPrice.amountMinor, flatAmount: flat.amountMinor, amount: amount.amountMinor, ...extra };
}

/** Graduated: each tier prices the units that fall in it; a tier's flat amount applies once it is reached. */
export function graduatedLines(tiers: Tier[], quantity: number, months: number, currency: string): LineItem[] {
  const lines: LineItem[] = [];
  let start = 0;
  for (const [index, tier] of tiers.entries()) {
    if (quantity <= start) break;
    const end = tier.upTo === null ? quantity : Math.min(quantity, tier.upTo);
    const units = end - start;
    lines.push(line('tier', `Tier ${index + 1} (${start + 1}–${tier.upTo ?? '∞'})`, units, monthly(tier.unitAmount, currency, months), monthly(tier.flatAmount, currency, months), { tier: index }));
    if (tier.upTo === null) break;
    start = tier.upTo;
  }
  return lines;
}

/** Volume: the one tier the quantity falls in prices every unit. */
export function volumeLines(tiers: Tier[], quantity: number, months: number, currency: string): LineItem[] {
  if (quantity === 0) return [];
  const index = tiers.findIndex((tier) => tier.upTo === null || quantity <= tier.upTo);
  const tier = tiers[index];
  return [line('tier', `Tier ${index + 1} (up to ${tier.upTo ?? '∞'})`, quantity, monthly(tier.unitAmount, currency, months), monthly(tier.flatAmount, currency, months), { tier: index })];
}

/**
 * Rounding rule: every line is a product of integers, so lines are exact. The only
 * fraction is a percentage coupon, taken once from the subtotal and rounded half up to
 * the minor unit (12.5 → 13; @recur/money's percentOf). A discount never exceeds the
 * subtotal, so no total is negative.
 */
function discountOf(coupon: PricedCoupon | null | undefined, subtotal: Money): Money {
  if (!coupon) return money(0, subtotal.currency);
  if (coupon.type === 'percentage') {
    if (!(coupon.value > 0 && coupon.value <= 100)) throw invalidArgument('coupon', 'a percentage coupon must be greater than 0 and at most 100');
    return min(subtotal, percentOf(subtotal, coupon.value));
  }
  if (coupon.currency !== subtotal.currency) {
    throw failedPrecondition('coupon_currency_mismatch', `Coupon '${coupon.id}' is in ${coupon.currency ?? 'no currency'}, the plan in ${subtotal.currency}.`);
  }
  return min(subtotal, money(coupon.value, coupon.currency));
}

/**
 * Gives each line the tax rates of what it prices: an add-on line its add-on's; an adjustment
 * (a proration) its own when it names them, else the plan's, as does the line carrying unused
 * credit out (so a credit and the charge it offsets are taxed alike); every other line the plan's.
 */
function withTaxRates(lines: LineItem[], plan: PricedPlan, addOns: PricedAddOn[], adjustments: PricedAdjustment[]): void {
  const planRates = plan.taxRateIds ?? [];
  const addOnRates = new Map(addOns.map((addOn) => [addOn.id, addOn.taxRateIds ?? []]));
  let adjustmentIndex = 0;
  for (const item of lines) {
    let rates: readonly string[] = planRates;
    if (item.kind === 'addon') rates = addOnRates.get(item.addonId ?? '') ?? [];
    else if (item.kind === 'adjustment') rates = adjustments[adjustmentIndex++]?.taxRateIds ?? planRates;
    if (rates.length > 0) item.taxRateIds = [...rates];
  }
}

/**
 * Prices one billing period of a plan: the plan's own charge for the quantity (by its
 * pricing model), its fixed price components, the usage charges (metered usage of closed
 * periods beyond the included quantity), add-ons and adjustments, then the coupon. All amounts are integers in the plan currency's minor unit.
 */
export function pricePeriod(input: PeriodInput): PeriodPrice {
  const { plan } = input;
  const quantity = input.quantity ?? 1;
  const interval = input.interval ?? 'monthly';
  const months = BILLING_INTERVAL_MONTHS[interval];
  if (months === undefined) throw invalidArgument('interval', `interval must be one of ${Object.keys(BILLING_INTERVAL_MONTHS).join(', ')}`);
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw invalidArgument('quantity', 'quantity must be a non-negative integer');

  const { currency } = plan;
  const base = monthly(plan.amountMonthly, currency, months);
  const none = money(0, currency);
  const lines: LineItem[] = [];
  switch (plan.pricingModel) {
    case 'flat_rate':
      lines.push(line('plan', plan.name, 1, base, none));
      break;
    case 'per_unit':
      lines.push(line('plan', plan.name, quantity, base, none));
      break;
    case 'package': {
      const packages = Math.ceil(quantity / plan.packageSize);
      lines.push(line('plan', `${plan.name} (${packages} × ${plan.packageSize} units)`, packages, base, none));
      break;
    }
    case 'graduated':
    case 'volume':
      if (plan.tiers.length === 0) throw failedPrecondition('plan_tiers_missing', `A ${plan.pricingModel} plan needs tiers before it can be priced.`);
      if (base.amountMinor > 0) lines.push(line('plan', plan.name, 1, base, none));
      lines.push(...(plan.pricingModel === 'graduated' ? graduatedLines(plan.tiers, quantity, months, currency) : volumeLines(plan.tiers, quantity, months, currency)));
      break;
    default:
      throw invalidArgument('pricing_model', `unknown pricing model '${String(plan.pricingModel)}'`);
  }
  if (!isTiered(plan.pricingModel) && plan.tiers.length > 0) {
    // Tiers of a non-tiered model are never priced; the catalog refuses to store them.
    throw failedPrecondition('plan_not_tiered', `A ${plan.pricingModel} plan has no tiers.`);
  }

  for (const component of plan.components) {
    // Metered components bill in arrears: their lines come from `usage`.
    if (component.type === 'fixed') {
      lines.push(line('component', component.name, 1, monthly(component.unitAmount, currency, months), none, { componentId: component.id }));
    }
  }
  for (const charge of input.usage ?? []) {
    const usageMonths = charge.interval === undefined ? months : BILLING_INTERVAL_MONTHS[charge.interval];
    if (usageMonths === undefined) throw invalidArgument('usage.interval', `interval must be one of ${Object.keys(BILLING_INTERVAL_MONTHS).join(', ')}`);
    lines.push(usageLine(charge, usageMonths, currency));
  }

  for (const addOn of input.addOns ?? []) {
    if (!Number.isSafeInteger(addOn.quantity) || addOn.quantity < 1) throw invalidArgument('add_ons.quantity', 'an add-on quantity must be a positive integer');
    lines.push(line('addon', addOn.name, addOn.quantity, monthly(addOn.priceMonthly, currency, months), none, { addonId: addOn.id }));
  }
  for (const adjustment of input.adjustments ?? []) {
    lines.push(line('adjustment', adjustment.description, 1, money(adjustment.amount, currency), none));
  }

  let subtotal = sum(currency, lines.map((item) => money(item.amount, currency)));
  let creditCarried = 0;
  if (subtotal.amountMinor < 0 && input.creditBeyondCharges === 'keep') {
    withTaxRates(lines, plan, input.addOns ?? [], input.adjustments ?? []);
    return { currency, interval, lines, subtotal: subtotal.amountMinor, discount: 0, total: subtotal.amountMinor, creditCarried: 0 };
  }
  if (subtotal.amountMinor < 0) {
    // More credit than charges: the invoice bills 0 and the rest of the credit moves on.
    creditCarried = -subtotal.amountMinor;
    lines.push(line('adjustment', CREDIT_CARRIED_DESCRIPTION, 1, money(creditCarried, currency), none));
    subtotal = money(0, currency);
  }
  const discount = discountOf(input.coupon, subtotal);
  withTaxRates(lines, plan, input.addOns ?? [], input.adjustments ?? []);
  return { currency, interval, lines, subtotal: subtotal.amountMinor, discount: discount.amountMinor, total: subtract(subtotal, discount).amountMinor, creditCarried };
}
