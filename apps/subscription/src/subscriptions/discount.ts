import type { PricedCoupon } from '@recur/pricing';

export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];

/**
 * A coupon applied to a subscription through a promotion code. It discounts the period
 * invoices raised after it was applied: `once` the next one, `repeating` the next
 * `durationInPeriods`, `forever` all of them. `periodsRemaining` counts down per billed
 * period (null: forever); at 0 the discount is gone.
 */
export interface Discount {
  coupon: PricedCoupon;
  duration: CouponDuration;
  durationInPeriods: number | null;
  periodsRemaining: number | null;
  promotionCodeId: string;
  promotionCode: string;
  start: Date;
}

export interface RedeemedCoupon {
  coupon: PricedCoupon;
  duration: CouponDuration;
  durationInPeriods: number | null;
  promotionCodeId: string;
  promotionCode: string;
}

/** A coupon redeemed at `at`, with all its periods ahead. */
export function startDiscount(redeemed: RedeemedCoupon, at: Date): Discount {
  const periodsRemaining = redeemed.duration === 'once' ? 1 : redeemed.duration === 'repeating' ? redeemed.durationInPeriods : null;
  return { ...redeemed, periodsRemaining, start: at };
}

/** The coupon the next period invoice is priced with, if the discount still runs. */
export function couponOfNextInvoice(discount: Discount | null): PricedCoupon | null {
  return discount && (discount.periodsRemaining === null || discount.periodsRemaining > 0) ? discount.coupon : null;
}

/** The discount after one period invoice was priced with it: one period fewer, gone at 0. */
export function afterBilledPeriod(discount: Discount | null): Discount | null {
  if (!discount || discount.periodsRemaining === null) return discount;
  const periodsRemaining = discount.periodsRemaining - 1;
  return periodsRemaining > 0 ? { ...discount, periodsRemaining } : null;
}
