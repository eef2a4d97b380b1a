import { isUnixSeconds, PROMOTION_CODE_PATTERN, UNIX_SECONDS_MAX } from '@recur/vocabulary';
import { invalidArgument, newId, type TenantRef } from '@recur/kernel';

export const MAX_REDEMPTIONS_MAX = 1_000_000_000;

/**
 * A promotion code: customer-facing text (unique per app, ignoring case) that redeems
 * a coupon, optionally until `expiresAt` and at most `maxRedemptions` times.
 */
export interface PromotionCode {
  id: string;
  tenant: TenantRef;
  code: string;
  couponId: string;
  active: boolean;
  maxRedemptions: number | null;
  timesRedeemed: number;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export interface PromotionCodeFields {
  active?: boolean;
  maxRedemptions?: number | null;
  /** Unix seconds; null removes the expiry. */
  expiresAt?: number | null;
}

/** The uniqueness key of a code: its text, lowercased. */
export const codeKey = (code: string): string => code.toLowerCase();

function checkCode(code: string): string {
  if (!PROMOTION_CODE_PATTERN.test(code)) throw invalidArgument('code', 'code must be 3 to 50 letters, digits, `-` or `_`');
  return code;
}

function checkMaxRedemptions(max: number | null, timesRedeemed: number): number | null {
  if (max === null) return null;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_REDEMPTIONS_MAX) throw invalidArgument('max_redemptions', `max_redemptions must be an integer between 1 and ${MAX_REDEMPTIONS_MAX}`);
  if (max < timesRedeemed) throw invalidArgument('max_redemptions', `max_redemptions cannot be below times_redeemed (${timesRedeemed})`);
  return max;
}

function checkExpiresAt(expiresAt: number | null, now: Date): Date | null {
  if (expiresAt === null) return null;
  if (!isUnixSeconds(expiresAt) || expiresAt * 1000 <= now.getTime()) throw invalidArgument('expires_at', `expires_at must be a future unix time in seconds, at most ${UNIX_SECONDS_MAX}`);
  return new Date(expiresAt * 1000);
}

export function createPromotionCode(tenant: TenantRef, couponId: string, fields: PromotionCodeFields & { code: string }, now: Date): PromotionCode {
  return {
    id: newId('promo'),
    tenant,
    code: checkCode(fields.code),
    couponId,
    active: fields.active ?? true,
    maxRedemptions: checkMaxRedemptions(fields.maxRedemptions ?? null, 0),
    timesRedeemed: 0,
    expiresAt: checkExpiresAt(fields.expiresAt ?? null, now),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
}

export function updatePromotionCode(code: PromotionCode, fields: PromotionCodeFields, now: Date): PromotionCode {
  return {
    ...code,
    active: fields.active ?? code.active,
    maxRedemptions: fields.maxRedemptions === undefined ? code.maxRedemptions : checkMaxRedemptions(fields.maxRedemptions, code.timesRedeemed),
    expiresAt: fields.expiresAt === undefined ? code.expiresAt : checkExpiresAt(fields.expiresAt, now),
    updatedAt: now,
  };
}

/**
 * One redemption of a code at `at` (the redeemer's time): refused while the code is inactive,
 * once its expiry has passed, or when max_redemptions is reached — each a bad body field of
 * the caller (400, param `promotion_code`) with its own code.
 */
export function redeemPromotionCode(code: PromotionCode, at: Date, now: Date): PromotionCode {
  if (!code.active) throw invalidArgument('promotion_code', `Promotion code '${code.code}' is inactive.`, 'promotion_code_inactive');
  if (code.expiresAt && code.expiresAt.getTime() <= at.getTime()) throw invalidArgument('promotion_code', `Promotion code '${code.code}' has expired.`, 'promotion_code_expired');
  if (code.maxRedemptions !== null && code.timesRedeemed >= code.maxRedemptions) {
    throw invalidArgument('promotion_code', `Promotion code '${code.code}' reached its ${code.maxRedemptions} redemptions.`, 'promotion_code_exhausted');
  }
  return { ...code, timesRedeemed: code.timesRedeemed + 1, updatedAt: now };
}

export function deletePromotionCode(code: PromotionCode, now: Date): PromotionCode {
  return { ...code, deletedAt: now, updatedAt: now };
}
