import type { Clock } from '@recur/kernel';
import { newId } from '@recur/kernel';
import type { Pool } from 'pg';
import type { SendResult } from './http-sender';
import { isSuccessStatus, nextStep } from './schedule';

/** One finished attempt of a claimed delivery, to record with the delivery's next step. */
export interface FinishedAttempt {
  deliveryId: string;
  /** 1-based: the delivery's attempt_count when claimed, plus one. */
  number: number;
  manual: boolean;
  attemptedAt: Date;
  result: SendResult;
}

/** Outcomes written by one statement at most; more wait for the next. */
export const RECORD_BATCH_MAX = 500;

/**
 * Records a batch of attempts and each delivery's next step, in one statement. An attempt whose
 * number the delivery already has (another worker recorded it after our lease lapsed) records
 * nothing, and its delivery keeps that worker's outcome.
 */
const RECORD_ATTEMPTS = `
  WITH outcome AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::int[], $8::text[], $9::boolean[], $10::text[], $11::timestamptz[])
      AS o (attempt_id, delivery_id, number, attempted_at, status_code, error, duration_ms, response_excerpt, manual, status, next_attempt_at)
  ), attempt AS (
    INSERT INTO delivery_attempts (id, delivery_id, number, attempted_at, status_code, error, duration_ms, response_excerpt, manual)
    SELECT attempt_id, delivery_id, number, attempted_at, status_code, error, duration_ms, response_excerpt, manual FROM outcome
    ON CONFLICT (delivery_id, number) DO NOTHING
    RETURNING delivery_id, number
  )
  UPDATE deliveries d SET attempt_count = o.number, status = o.status, next_attempt_at = o.next_attempt_at,
         lease_until = NULL, manual = false, updated_at = $12
  FROM attempt a JOIN outcome o ON o.delivery_id = a.delivery_id AND o.number = a.number
  WHERE d.id = a.delivery_id`;

/**
 * Writes finished attempts in groups (group commit): one statement and one commit for every
 * attempt that finished while the previous group was being written, instead of one each. With
 * one group in flight, an attempt that finishes alone is written at once; under load the groups
 * grow. The dispatcher does not wait for the write (its slot takes the next delivery), only for
 * room when `maxBacklog` outcomes are already waiting. An outcome not written (the statement
 * failed, the process died) leaves its delivery leased: the lease lapses and the delivery is
 * attempted again, never lost. The next step's due time counts from when the group is written.
 */
export class AttemptsRepository {
  private queue: FinishedAttempt[] = [];
  private writing?: Promise<void>;
  /** Callers waiting for room in the queue. */
  private roomWaiters: (() => void)[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly now: Clock,
    private readonly maxBacklog: number,
    private readonly onWriteFailed: (error: Error, attempts: number) => void,
  ) {}

  /** Queues the outcome for the next group; resolves at once, or once the queue has room again. */
  record(attempt: FinishedAttempt): Promise<void> {
    this.queue.push(attempt);
    this.writing ??= this.writeGroups();
    if (this.queue.length < this.maxBacklog) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once every outcome queued so far is written (or its write failed). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async writeGroups(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, RECORD_BATCH_MAX);
        await this.write(group).catch((error: Error) => this.onWriteFailed(error, group.length));
        if (this.queue.length < this.maxBacklog) for (const resolve of this.roomWaiters.splice(0)) resolve();
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async write(attempts: FinishedAttempt[]): Promise<void> {
    const recordedAt = this.now();
    const rows = attempts.map((attempt) => {
      const { statusCode } = attempt.result;
      const step = nextStep(attempt.number, { ok: statusCode !== null && isSuccessStatus(statusCode) }, attempt.manual);
      return { ...attempt, status: step.status, nextAttemptAt: step.status === 'pending' ? new Date(recordedAt.getTime() + step.delayMs) : null };
    });
    await this.pool.query(RECORD_ATTEMPTS, [
      rows.map(() => newId('wha')),
      rows.map((row) => row.deliveryId),
      rows.map((row) => row.number),
      rows.map((row) => row.attemptedAt),
      rows.map((row) => row.result.statusCode),
      rows.map((row) => row.result.error),
      rows.map((row) => row.result.durationMs),
      rows.map((row) => row.result.responseExcerpt),
      rows.map((row) => row.manual),
      rows.map((row) => row.status),
      rows.map((row) => row.nextAttemptAt),
      recordedAt,
    ]);
  }
}
