import { invalidArgument } from '@recur/kernel';
import { roundHalfUp } from '@recur/money';

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
