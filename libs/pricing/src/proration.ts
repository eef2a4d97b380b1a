import { invalidArgument } from '@recur/kernel';
import { allocate, money, roundHalfUp } from '@recur/money';

/** A billing period, as unix seconds: [start, end). */
export interface PeriodSpan {
  start: number;
  end: number;
}

/**
 * Proration rule (docs/api/subscriptions.md#changes-mid-period): the part of a period's price
 * that falls after `at`, to the second — `amount × (end − at) / (end − start)`, rounded half
 * up once to the minor unit. A change at the period's start prorates the whole amount, one at
 * (or after) its end nothing. Negative amounts (credits) round symmetrically (−12.5 → −13).
 */
export function prorate(amount: number, period: PeriodSpan, at: number): number {
  if (!Number.isSafeInteger(amount)) throw invalidArgument('amount', 'an amount must be an integer number of minor units');
  if (!Number.isSafeInteger(period.start) || !Number.isSafeInteger(period.end) || period.end <= period.start) {
    throw invalidArgument('period', 'a period must end after it starts (unix seconds)');
  }
  if (!Number.isSafeInteger(at)) throw invalidArgument('at', 'a time must be unix seconds');
  const remaining = Math.min(period.end - period.start, Math.max(0, period.end - at));
  return roundHalfUp(BigInt(amount) * BigInt(remaining), period.end - period.start);
}

/**
 * What a period invoice took off with its coupon (`amount`) and the sum of the charged (positive)
 * lines it spread that over (`base`): the discount rate the period was billed at.
 */
export interface AppliedDiscount {
  amount: number;
  base: number;
}

/** A period invoice's discount as AppliedDiscount, from its lines and discount. */
export function appliedDiscountOf(price: { lines: readonly { amount: number }[]; discount: number }): AppliedDiscount {
  return { amount: price.discount, base: price.lines.reduce((total, line) => total + Math.max(line.amount, 0), 0) };
}

/** One credit for the unused time of a period: per plan (its lines) and per add-on, with their tax rates. */
export interface UnusedTimeCredit {
  /** The add-on it credits; absent: the plan's lines (base, tiers, fixed components). */
  addonId?: string;
  /** Negative (a credit); never 0 (zero credits are left out). */
  amount: number;
  taxRateIds?: string[];
}

/**
 * The credit for the unused part of a period paid in advance, from `at` to its end
 * (docs/api/subscriptions.md#final-invoice): the period's recurring lines (plan, tiers, fixed
 * components, add-ons), grouped per plan and per add-on, each less its share of the discount
 * the period invoice applied (that invoice's rate on these lines, never more than it took off,
 * spread by @recur/money's `allocate`), then prorated to the second (`prorate`). The sum never
 * exceeds what the period invoice charged for these lines.
 */
export function unusedTimeCredits(
  recurring: readonly { amount: number; addonId?: string; taxRateIds?: string[] }[],
  discount: AppliedDiscount | null,
  period: PeriodSpan,
  at: number,
): UnusedTimeCredit[] {
  const groups = new Map<string, { addonId?: string; amount: number; taxRateIds?: string[] }>();
  for (const line of recurring) {
    const key = line.addonId ?? '';
    const group = groups.get(key) ?? { ...(line.addonId ? { addonId: line.addonId } : {}), amount: 0, ...(line.taxRateIds ? { taxRateIds: [...line.taxRateIds] } : {}) };
    group.amount += line.amount;
    groups.set(key, group);
  }
  const list = [...groups.values()].filter((group) => group.amount > 0);
  const gross = list.reduce((total, group) => total + group.amount, 0);
  const rated = discount && discount.base > 0 ? Math.min(discount.amount, gross, roundHalfUp(BigInt(discount.amount) * BigInt(gross), discount.base)) : 0;
  // The currency does not matter to the spread: `allocate` is integer arithmetic on minor units.
  const shares = allocate(money(Math.max(rated, 0), 'usd'), list.map((group) => group.amount)).map((share) => share.amountMinor);
  return list
    .map((group, index) => ({ ...group, amount: -prorate(group.amount - shares[index], period, at) }))
    .filter((credit) => credit.amount !== 0);
}
