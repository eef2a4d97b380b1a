import { BILLING_INTERVAL_MONTHS, type BillingInterval } from '@recur/pricing';

/**
 * Calendar arithmetic of billing periods. Period n of a subscription runs from
 * anchor + n intervals to anchor + n+1 intervals, counted from the anchor each time (never
 * from the previous end), so a period anchored on the 31st ends on the last day of shorter
 * months and returns to the 31st afterwards: Jan 31 → Feb 28 → Mar 31. Times are UTC.
 */
export function addMonths(anchor: Date, months: number): Date {
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(anchor.getUTCDate(), lastDay);
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

/** The start and end of period `index` (0-based) counted from `anchor`. */
export function periodOf(anchor: Date, interval: BillingInterval, index: number): { start: Date; end: Date } {
  const months = BILLING_INTERVAL_MONTHS[interval];
  return { start: addMonths(anchor, months * index), end: addMonths(anchor, months * (index + 1)) };
}

export const DAY_MS = 86_400_000;
