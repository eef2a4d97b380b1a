/**
 * The delivery schedule of the specification: 5 attempts in all, waiting about
 * 1 s, 2 s, 4 s and 8 s between them. Any 2xx answer within the timeout is success.
 */
export const MAX_ATTEMPTS = 5;
export const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000] as const;

export type AttemptOutcome = { ok: true } | { ok: false };

export type NextStep = { status: 'succeeded' } | { status: 'failed' } | { status: 'pending'; delayMs: number };

/** What follows attempt `number` (1-based). A manual retry is one attempt, with no schedule. */
export function nextStep(number: number, outcome: AttemptOutcome, manual: boolean): NextStep {
  if (outcome.ok) return { status: 'succeeded' };
  if (manual || number >= MAX_ATTEMPTS) return { status: 'failed' };
  return { status: 'pending', delayMs: RETRY_DELAYS_MS[number - 1] };
}

export const isSuccessStatus = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300;
