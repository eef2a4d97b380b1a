/**
 * Bounds of the field types every resource shares, checked at the gateway's door and again
 * by the owning service. A value outside them is refused when written, so no stored value can
 * break a later read (a time beyond what a Date can show, say).
 */

/** Times in unix seconds: from 1970 to the last second of 9999 (ISO 8601's four-digit years). */
export const UNIX_SECONDS_MIN = 1;
export const UNIX_SECONDS_MAX = 253_402_300_799;

/** A percentage coupon takes 0.01 to 100, in hundredths: 5e-324 is not a percentage anyone means. */
export const PERCENT_MIN = 0.01;
export const PERCENT_MAX = 100;

/** True for an integer count of unix seconds within the bounds. */
export const isUnixSeconds = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= UNIX_SECONDS_MIN && value <= UNIX_SECONDS_MAX;

/** True for a percentage within the bounds with at most two decimals (12.34 is 1233.99… hundredths in binary, hence the tolerance). */
export const isPercent = (value: unknown): value is number =>
  typeof value === 'number' && value >= PERCENT_MIN && value <= PERCENT_MAX && Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
