import { create } from '@bufbuild/protobuf';
import { couponV1, toMoneyMessage } from '@recur/contracts';
import { type CouponDuration } from '@recur/vocabulary';
import { money } from '@recur/money';
import { type Metadata, unixSeconds } from '@recur/kernel';
import type { CouponType } from '@recur/pricing';
import type { Coupon as CouponRow, Prisma, PromotionCode as PromotionCodeRow } from '../generated/prisma/client';
import type { Coupon } from './coupon';
import { codeKey, type PromotionCode } from './promotion-code';

export function fromCouponRow(row: CouponRow): Coupon {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    name: row.name,
    type: row.type as CouponType,
    value: Number(row.value),
    currency: row.currency,
    duration: row.duration as CouponDuration,
    durationInPeriods: row.durationInPeriods,
    timesRedeemed: row.timesRedeemed,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedAt: row.deletedAt,
  };
}

export function toCouponRow(coupon: Coupon): Prisma.CouponUncheckedCreateInput {
  return {
    id: coupon.id,
    accountId: coupon.tenant.accountId,
    livemode: coupon.tenant.livemode,
    name: coupon.name,
    type: coupon.type,
    value: coupon.value.toFixed(2),
    currency: coupon.currency,
    duration: coupon.duration,
    durationInPeriods: coupon.durationInPeriods,
    timesRedeemed: coupon.timesRedeemed,
    metadata: coupon.metadata,
    createdAt: coupon.createdAt,
    updatedAt: coupon.updatedAt,
    deletedAt: coupon.deletedAt,
  };
}

export function toCouponMessage(coupon: Coupon): couponV1.Coupon {
  return create(couponV1.CouponSchema, {
    id: coupon.id,
    livemode: coupon.tenant.livemode,
    name: coupon.name,
    type: coupon.type,
    value: coupon.value,
    currency: coupon.currency ?? undefined,
    amountOff: coupon.type === 'fixed_amount' && coupon.currency !== null ? toMoneyMessage(money(coupon.value, coupon.currency)) : undefined,
    duration: coupon.duration,
    durationInPeriods: coupon.durationInPeriods ?? undefined,
    timesRedeemed: coupon.timesRedeemed,
    metadata: coupon.metadata,
    created: BigInt(unixSeconds(coupon.createdAt)),
    updated: BigInt(unixSeconds(coupon.updatedAt)),
    deletedAt: coupon.deletedAt ? BigInt(unixSeconds(coupon.deletedAt)) : undefined,
  });
}

export function fromPromotionCodeRow(row: PromotionCodeRow): PromotionCode {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    code: row.code,
    couponId: row.couponId,
    active: row.active,
    maxRedemptions: row.maxRedemptions,
    timesRedeemed: row.timesRedeemed,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    deletedAt: row.deletedAt,
  };
}

export function toPromotionCodeRow(code: PromotionCode): Prisma.PromotionCodeUncheckedCreateInput {
  return {
    id: code.id,
    accountId: code.tenant.accountId,
    livemode: code.tenant.livemode,
    code: code.code,
    codeKey: code.deletedAt ? null : codeKey(code.code),
    couponId: code.couponId,
    active: code.active,
    maxRedemptions: code.maxRedemptions,
    timesRedeemed: code.timesRedeemed,
    expiresAt: code.expiresAt,
    createdAt: code.createdAt,
    updatedAt: code.updatedAt,
    deletedAt: code.deletedAt,
  };
}

export function toPromotionCodeMessage(code: PromotionCode): couponV1.PromotionCode {
  return create(couponV1.PromotionCodeSchema, {
    id: code.id,
    livemode: code.tenant.livemode,
    code: code.code,
    couponId: code.couponId,
    active: code.active,
    maxRedemptions: code.maxRedemptions ?? undefined,
    timesRedeemed: code.timesRedeemed,
    expiresAt: code.expiresAt ? BigInt(unixSeconds(code.expiresAt)) : undefined,
    created: BigInt(unixSeconds(code.createdAt)),
    updated: BigInt(unixSeconds(code.updatedAt)),
    deletedAt: code.deletedAt ? BigInt(unixSeconds(code.deletedAt)) : undefined,
  });
}
