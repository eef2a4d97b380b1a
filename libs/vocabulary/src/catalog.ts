/**
 * Value sets and bounds of the catalog, shared by the gateway's request validation,
 * the catalog service's rules and the pricing engine. One definition each.
 */
// Pricing models, billing intervals, price component and coupon types, tier rules live in @recur/pricing (the engine needs them).
export const PLAN_STATUSES = ['active', 'archived'] as const;
export const ADDON_STATUSES = ['on_sale', 'off_sale'] as const;
export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];

export const CATALOG_NAME_MAX = 256;
export const CATALOG_DESCRIPTION_MAX = 1000;
/** The largest amount in minor units (10^12 - 1); defined with Money. */
export { AMOUNT_MAX } from '@recur/money';
export const PACKAGE_SIZE_MAX = 1_000_000;
export const QUANTITY_MAX = 1_000_000_000_000;
export const COUPON_PERIODS_MAX = 120;
export const METRIC_NAME_PATTERN = /^[a-z][a-z0-9_.-]{0,99}$/;
export const PROMOTION_CODE_PATTERN = /^[A-Za-z0-9_-]{3,50}$/;
/** Three lowercase letters: the ISO 4217 shape, checked at the gateway; the catalog checks the code against ISO 4217 itself (@recur/money). */
export const CURRENCY_PATTERN = /^[a-z]{3}$/;
export const DEFAULT_CURRENCY = 'usd';
