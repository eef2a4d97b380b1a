/**
 * The attempts of a job and the waits between them: `new RetrySchedule([1_000, 2_000])` is three
 * attempts in all, the second 1 s after the first failed, the third 2 s after the second.
 */
export class RetrySchedule {
  constructor(readonly delaysMs: readonly number[]) {}

  get maxAttempts(): number {
    return this.delaysMs.length + 1;
  }

  /** The wait after attempt `attempt` (1-based) failed; null when it was the last. */
  delayAfter(attempt: number): number | null {
    return attempt >= 1 && attempt <= this.delaysMs.length ? this.delaysMs[attempt - 1] : null;
  }

  /** When the next attempt is due if attempt `attempt` failed at `now`; null when none is left. */
  nextAttemptAt(attempt: number, now: Date): Date | null {
    const delay = this.delayAfter(attempt);
    return delay === null ? null : new Date(now.getTime() + delay);
  }
}

/**
 * The pause after `failures` consecutive failures of a worker itself (database or bus down):
 * 400 ms, 800 ms, … up to `maxMs`, so an outage is not hammered.
 */
export function exponentialBackoff({ baseMs = 200, maxMs = 10_000 } = {}): (failures: number) => number {
  return (failures) => Math.min(baseMs * 2 ** failures, maxMs);
}
