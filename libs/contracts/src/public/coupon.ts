import type { Coupon, PromotionCode } from '../gen/recur/catalog/v1/coupon_pb';
import { moneyFromMessage } from '../money';

/** The public JSON of a coupon: what `/v1/coupons` answers. */
export interface CouponJson {
  id: string;
  object: 'coupon';
  livemode: boolean;
  name: string;
  type: string;
  value: number;
  currency: string | null;
  duration: string;
  duration_in_periods: number | null;
  times_redeemed: number;
  metadata: Record<string, string>;
  created: number;
  updated: number;
  deleted: boolean;
}

export function presentCoupon(coupon: Coupon): CouponJson {
  // A fixed amount travels as Money (amount_off); a percentage as value.
  const amountOff = coupon.amountOff === undefined ? null : moneyFromMessage(coupon.amountOff, 'amount_off');
  return {
    id: coupon.id,
    object: 'coupon',
    livemode: coupon.livemode,
    name: coupon.name,
    type: coupon.type,
    value: amountOff?.amountMinor ?? coupon.value,
    currency: amountOff?.currency ?? null,
    duration: coupon.duration,
    duration_in_periods: coupon.durationInPeriods ?? null,
    times_redeemed: coupon.timesRedeemed,
    metadata: { ...coupon.metadata },
    created: Number(coupon.created),
    updated: Number(coupon.updated),
    deleted: coupon.deletedAt !== undefined,
  };
}

/** The public JSON of a promotion code: what `/v1/promotion-codes` answers. */
export interface PromotionCodeJson {
  id: string;
  object: 'promotion_code';
  livemode: boolean;
  code: string;
  coupon: string;
  active: boolean;
  max_redemptions: number | null;
  times_redeemed: number;
  expires_at: number | null;
  created: number;
  updated: number;
  deleted: boolean;
}

export function presentPromotionCode(code: PromotionCode): PromotionCodeJson {
  return {
    id: code.id,
    object: 'promotion_code',
    livemode: code.livemode,
    code: code.code,
    coupon: code.couponId,
    active: code.active,
    max_redemptions: code.maxRedemptions ?? null,
    times_redeemed: code.timesRedeemed,
    expires_at: code.expiresAt === undefined ? null : Number(code.expiresAt),
    created: Number(code.created),
    updated: Number(code.updated),
    deleted: code.deletedAt !== undefined,
  };
}
