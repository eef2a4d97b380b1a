import { RetrySchedule } from '@recur/jobs';

/**
 * The delivery schedule of the specification: 5 attempts in all, waiting about
 * 1 s, 2 s, 4 s and 8 s between them. Any 2xx answer within the timeout is success.
 */
export const DELIVERY_SCHEDULE = new RetrySchedule([1_000, 2_000, 4_000, 8_000]);
export const MAX_ATTEMPTS = DELIVERY_SCHEDULE.maxAttempts;
export const RETRY_DELAYS_MS = DELIVERY_SCHEDULE.delaysMs;

export type AttemptOutcome = { ok: true } | { ok: false };

export type NextStep = { status: 'succeeded' } | { status: 'failed' } | { status: 'pending'; delayMs: number };

/** What follows attempt `number` (1-based). A manual retry is one attempt, with no schedule. */
export function nextStep(number: number, outcome: AttemptOutcome, manual: boolean): NextStep {
  if (outcome.ok) return { status: 'succeeded' };
  const delayMs = manual ? null : DELIVERY_SCHEDULE.delayAfter(number);
  return delayMs === null ? { status: 'failed' } : { status: 'pending', delayMs };
}

export const isSuccessStatus = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300;
