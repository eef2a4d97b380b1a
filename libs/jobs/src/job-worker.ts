import type { Clock } from '@recur/kernel';
import { Client } from 'pg';
import { exponentialBackoff } from './retry-schedule';
import { WakeUp } from './wake-up';

export interface JobWorkerOptions<Job> {
  /** Names the worker in its logs: `webhook deliveries`, `subscription outbox relay`. */
  name: string;
  /** Every time the worker reads: due-ness is the clock's, never the database's now(). */
  clock: Clock;
  /**
   * Leases up to `limit` jobs that are due at `now` and returns them; [] when none is. A query
   * built on claimDueRowsSql, joined with whatever else the jobs need, in one round trip: a
   * service's worker runs it through `claimDueRows` (@recur/persistence).
   */
  claim(limit: number, now: Date): Promise<Job[]>;
  /**
   * Runs one claimed job and records its outcome (done, or due again by a RetrySchedule).
   * A throw counts as a failure of the worker itself, which then backs off; the job's lease
   * lapses and it is claimed again.
   */
  run(job: Job): Promise<void>;
  /** When the next job becomes due (nextDueAtSql): the worker then sleeps only until then. */
  nextDueAt?(): Promise<Date | null>;
  /** Jobs running at once in this process; default 1. */
  concurrency?: number;
  /**
   * Jobs claimed ahead of a free slot, default 0: they wait in the process (leased) and start
   * as soon as a running job finishes, so a slot never waits for a claim's round trip. Their
   * lease runs while they wait: see `stillLeased`.
   */
  prefetch?: number;
  /**
   * Whether a claimed job still holds its lease long enough to run, asked as it starts. A job
   * that does not is dropped, not run (its lease lapses and it is claimed again), so no job runs
   * past its lease, when another worker may have claimed it. Default: always.
   */
  stillLeased?(job: Job, now: Date): boolean;
  /** LISTEN on this channel: a NOTIFY (sent at the commit that queued a job) wakes the worker. */
  wakeUp?: { databaseUrl: string; channel: string };
  /** The safety poll, for a NOTIFY lost across a reconnect; default 1000 ms. */
  pollMs?: number;
  /** The pause after consecutive failures of claim or run; default 400 ms doubling to 10 s. */
  failureBackoff?: (failures: number) => number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** The shortest sleep, so a job just leased by another replica is not polled in a tight loop. */
const MIN_SLEEP_MS = 10;

/**
 * Runs due jobs of one kind: claims them (leases, so replicas share the work and a job whose
 * worker died is claimed again once its lease lapses), runs up to `concurrency` at once (with
 * up to `prefetch` more claimed and waiting for a slot), and sleeps until a NOTIFY, a job
 * finishing, the next due time or the safety poll. A wake-up that arrives while it is busy is
 * kept (WakeUp), so it is never lost. stop() waits for the jobs claimed, running or waiting,
 * so their outcomes are recorded.
 */
export class JobWorker<Job> {
  private readonly concurrency: number;
  private readonly prefetch: number;
  private readonly minClaim: number;
  private readonly pollMs: number;
  private readonly failureBackoff: (failures: number) => number;
  private readonly wakeUp = new WakeUp();
  private readonly stopping = new WakeUp();
  private readonly inFlight = new Set<Promise<void>>();
  /** Claimed ahead (prefetch), in claim order, waiting for a slot. */
  private readonly waiting: Job[] = [];
  private running = false;
  private loop?: Promise<void>;
  private listener?: Client;
  /** Consecutive failures of claim or run; reset by a job that ran or a claim that found nothing. */
  private failures = 0;

  constructor(private readonly options: JobWorkerOptions<Job>) {
    this.concurrency = options.concurrency ?? 1;
    this.prefetch = options.prefetch ?? 0;
    // Claiming ahead, claim once a quarter of the places to wait are free: fewer, larger claims.
    this.minClaim = Math.max(1, Math.ceil(this.prefetch / 4));
    this.pollMs = options.pollMs ?? 1_000;
    this.failureBackoff = options.failureBackoff ?? exponentialBackoff();
  }

  async start(): Promise<void> {
    if (this.loop) return;
    this.running = true;
    if (this.options.wakeUp) {
      await this.listen().catch((error: Error) => this.options.log?.(`${this.options.name}: wake-ups unavailable, polling`, { error: error.message }));
    }
    this.loop = this.work();
  }

  /** Stops claiming, then waits for the jobs in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.signal();
    this.wakeUp.signal();
    await this.loop;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.listener?.end().catch(() => undefined);
    this.listener = undefined;
    this.loop = undefined;
  }

  /** Looks for due jobs now, as a NOTIFY does (e.g. after a test clock moved). */
  wake(): void {
    this.wakeUp.signal();
  }

  private async work(): Promise<void> {
    while (this.running) {
      if (this.failures > 0) {
        await this.stopping.sleep(this.failureBackoff(this.failures));
        if (!this.running) break;
      }
      // Reset before claiming: a wake-up from here on means "look again", and is kept.
      this.wakeUp.reset();
      if (this.options.wakeUp && !this.listener) await this.listen().catch(() => undefined);
      let claimed: number;
      try {
        claimed = await this.claimAndStart();
      } catch (error) {
        this.fail('claim', error);
        continue;
      }
      const full = this.room() < this.minClaim;
      if (claimed > 0 && !full) continue;
      // When full, a finishing job wakes the loop; the poll is only the safety net.
      await this.wakeUp.sleep(full ? this.pollMs : await this.msUntilNextDue());
    }
  }

  private async claimAndStart(): Promise<number> {
    const room = this.room();
    if (room < this.minClaim) return 0;
    const jobs = await this.options.claim(room, this.options.clock());
    if (jobs.length === 0) this.failures = 0;
    this.waiting.push(...jobs);
    this.startWaiting();
    return jobs.length;
  }

  /** How many more jobs may be claimed: free slots plus free places to wait. */
  private room(): number {
    return this.concurrency + this.prefetch - this.inFlight.size - this.waiting.length;
  }

  /** Starts waiting jobs while slots are free. */
  private startWaiting(): void {
    while (this.waiting.length > 0 && this.inFlight.size < this.concurrency) {
      const job = this.waiting.shift()!;
      if (this.options.stillLeased && !this.options.stillLeased(job, this.options.clock())) continue;
      this.startRun(job);
    }
  }

  private startRun(job: Job): void {
    const run = Promise.resolve()
      .then(() => this.options.run(job))
      .then(
        () => {
          this.failures = 0;
        },
        (error) => this.fail('run', error),
      );
    this.inFlight.add(run);
    void run.finally(() => {
      this.inFlight.delete(run);
      this.startWaiting();
      this.wakeUp.signal();
    });
  }

  private fail(step: 'claim' | 'run', error: unknown): void {
    this.failures += 1;
    this.options.log?.(`${this.options.name}: ${step} failed; will retry`, { error: (error as Error).message, failures: this.failures });
  }

  private async msUntilNextDue(): Promise<number> {
    if (!this.options.nextDueAt) return this.pollMs;
    try {
      const next = await this.options.nextDueAt();
      return next ? Math.min(this.pollMs, Math.max(MIN_SLEEP_MS, next.getTime() - this.options.clock().getTime())) : this.pollMs;
    } catch {
      return this.pollMs; // only an optimisation: the poll still comes
    }
  }

  private async listen(): Promise<void> {
    const { databaseUrl, channel } = this.options.wakeUp!;
    const listener = new Client({ connectionString: databaseUrl });
    const forget = () => {
      if (this.listener === listener) this.listener = undefined;
    };
    listener.on('notification', () => this.wakeUp.signal());
    // The safety poll covers the gap; the loop listens again on its next pass.
    listener.on('error', forget);
    listener.on('end', forget);
    try {
      await listener.connect();
      await listener.query(`LISTEN ${channel}`);
    } catch (error) {
      await listener.end().catch(() => undefined);
      throw error;
    }
    this.listener = listener;
  }
}
