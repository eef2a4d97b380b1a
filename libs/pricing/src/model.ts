import { invalidArgument } from '@recur/kernel';

/**
 * What a plan can be priced by. Every recurring price is monthly; a period of another
 * interval multiplies it by the interval's months (quarterly ×3, yearly ×12).
 *  - flat_rate:  amount_monthly per period, whatever the quantity
 *  - per_unit:   amount_monthly × quantity
 *  - package:    amount_monthly × ceil(quantity / package_size)
 *  - graduated:  amount_monthly (a base fee, may be 0) + each tier prices the units that fall in it
 *  - volume:     amount_monthly (a base fee, may be 0) + the one tier the quantity falls in prices all units
 */
export const PRICING_MODELS = ['flat_rate', 'per_unit', 'package', 'graduated', 'volume'] as const;
export type PricingModel = (typeof PRICING_MODELS)[number];
/** The models priced through tiers; only their plans accept a tier set. */
export const TIERED_PRICING_MODELS: readonly PricingModel[] = ['graduated', 'volume'];
export const isTiered = (model: PricingModel): boolean => TIERED_PRICING_MODELS.includes(model);

/** Billing intervals and their length in months. */
export const BILLING_INTERVAL_MONTHS = { monthly: 1, quarterly: 3, yearly: 12 } as const;
export type BillingInterval = keyof typeof BILLING_INTERVAL_MONTHS;
export const BILLING_INTERVALS = Object.keys(BILLING_INTERVAL_MONTHS) as BillingInterval[];

/** `metered`: unit_amount per unit of a usage metric beyond the included quantity; `fixed`: unit_amount per month. */
export const PRICE_COMPONENT_TYPES = ['metered', 'fixed'] as const;
export type PriceComponentType = (typeof PRICE_COMPONENT_TYPES)[number];

export const COUPON_TYPES = ['percentage', 'fixed_amount'] as const;
export type CouponType = (typeof COUPON_TYPES)[number];

export const TIERS_MAX = 50;

/** One tier; `upTo: null` is the open-ended last tier. Amounts are minor units. */
export interface Tier {
  upTo: number | null;
  unitAmount: number;
  flatAmount: number;
}

export interface PricedComponent {
  id: string;
  type: PriceComponentType;
  name: string;
  metricName: string | null;
  unitAmount: number;
  includedQuantity: number;
  /** The plan's limit of the metric per period (metered), which usage-metering alerts on; not priced. Absent or null: none. */
  usageLimit?: number | null;
}

export interface PricedPlan {
  name: string;
  pricingModel: PricingModel;
  amountMonthly: number;
  currency: string;
  packageSize: number;
  tiers: Tier[];
  components: PricedComponent[];
  /** The tax rates (`txr_…`) the plan names for its lines; absent or empty: none (snapshots before plans named rates). */
  taxRateIds?: string[];
}

/** An add-on a subscription carries: its monthly price (minor units, the plan's currency) × quantity. */
export interface PricedAddOn {
  id: string;
  name: string;
  priceMonthly: number;
  quantity: number;
  /** The tax rates the add-on names for its line; absent or empty: none. */
  taxRateIds?: string[];
}

/**
 * A one-time amount billed with a period: a proration (a credit is negative, a charge
 * positive) or a credit carried from an earlier invoice. Exact minor units of the plan's currency.
 */
export interface PricedAdjustment {
  description: string;
  amount: number;
  /** The tax rates of what the adjustment prorates (the plan's or the add-on's); absent: none. */
  taxRateIds?: string[];
}

export interface PricedCoupon {
  id: string;
  name: string;
  type: CouponType;
  /** Percent off (0 < value ≤ 100, two decimals at most) or amount off in minor units. */
  value: number;
  currency: string | null;
}

const isNonNegativeInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * Validates a tier set: 1..50 tiers, lowest first; every bound a positive integer
 * strictly above the previous one (so the tiers are contiguous: each starts one unit
 * after the previous bound); exactly one open-ended tier, the last; non-negative
 * integer amounts. The error names the offending tier field (`tiers[1].up_to`).
 */
export function checkTiers(tiers: Tier[], param = 'tiers'): Tier[] {
  if (tiers.length === 0) throw invalidArgument(param, 'tiers must hold at least one tier');
  if (tiers.length > TIERS_MAX) throw invalidArgument(param, `tiers may hold at most ${TIERS_MAX} tiers`);
  let previous = 0;
  tiers.forEach((tier, index) => {
    const at = `${param}[${index}]`;
    const last = index === tiers.length - 1;
    if (tier.upTo === null) {
      if (!last) throw invalidArgument(`${at}.up_to`, 'only the last tier may be open-ended (up_to: null)');
    } else {
      if (!Number.isSafeInteger(tier.upTo) || tier.upTo < 1) throw invalidArgument(`${at}.up_to`, 'up_to must be a positive integer or null');
      if (tier.upTo <= previous) throw invalidArgument(`${at}.up_to`, `up_to must be greater than the previous tier's up_to (${previous})`);
      if (last) throw invalidArgument(`${at}.up_to`, 'the last tier must be open-ended (up_to: null)');
      previous = tier.upTo;
    }
    if (!isNonNegativeInteger(tier.unitAmount)) throw invalidArgument(`${at}.unit_amount`, 'unit_amount must be a non-negative integer');
    if (!isNonNegativeInteger(tier.flatAmount)) throw invalidArgument(`${at}.flat_amount`, 'flat_amount must be a non-negative integer');
  });
  return tiers;
}
