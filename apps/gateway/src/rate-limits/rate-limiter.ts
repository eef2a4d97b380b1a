import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { CLOCK, type Clock } from '@recur/kernel';
import { JsonLogger } from '@recur/telemetry';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config';
import type { Caller } from '../http/request-context';
import { PrismaService } from '../infrastructure/prisma.service';

/** Reads (GET, HEAD) and writes (every other method) are limited apart, as Stripe does. */
export type RateLimitClass = 'read' | 'write';

export const rateLimitClassOf = (method: string): RateLimitClass => (method === 'GET' || method === 'HEAD' ? 'read' : 'write');

/** The gateway's defaults, per key and class, a second: an app's own limit (operator API) overrides them. */
export interface RateLimitDefaults {
  livePerSecond: number;
  sandboxPerSecond: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** What this replica knows is left in the window (the others' latest admissions may not be in it yet). */
  remaining: number;
  /** Seconds until the window ends: the counts start again then. */
  resetSeconds: number;
}

/**
 * A replica's count of one key and class in the current one-second window: `shared` is the sum
 * over every replica as last read from PostgreSQL (this one's flushed admissions included),
 * `pending` what this replica admitted since.
 */
interface WindowCount {
  windowStart: number;
  shared: number;
  pending: number;
  lastFlushAt: number;
  /** The flush under way: its admissions are still in `pending` until it returns. */
  flushing: Promise<void> | undefined;
}

/** A replica adds its admissions to the shared count at least this often while a key is in use. */
export const RATE_LIMIT_FLUSH_MS = 100;
/**
 * The most admissions of a key a replica holds that the others cannot see yet (a tenth of the
 * limit): one more waits until they are added to the shared count. They are added, off the
 * request path, once half of them are there.
 */
export const rateLimitUnsharedMax = (limit: number): number => Math.max(1, Math.floor(limit / 10));
/** Adds a replica's admissions to its key's row, starting the row again when the window is newer; answers the shared count. */
const FLUSH_SQL = `
  INSERT INTO rate_limit_windows AS w (key_id, class, window_start, taken) VALUES ($1, $2, $3, $4)
  ON CONFLICT (key_id, class) DO UPDATE SET
    taken = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.taken + EXCLUDED.taken
                 WHEN w.window_start < EXCLUDED.window_start THEN EXCLUDED.taken
                 ELSE w.taken END,
    window_start = GREATEST(w.window_start, EXCLUDED.window_start)
  RETURNING window_start, taken`;

/** How often each replica deletes the rows of ended windows. */
export const RATE_LIMIT_PURGE_INTERVAL_MS = 60_000;
/** A row whose window ended this long ago is deleted: no replica counts in it any more. */
export const RATE_LIMIT_ENDED_WINDOW_KEPT_SECONDS = 60;
/**
 * Deletes the rows whose window started before $1 (whole seconds). A key in use has its row
 * started again by its next flush; a key no longer used leaves none behind. The table holds a row
 * per key and class used within the last minute or two, so the scan stays small without an index
 * on window_start (which would also keep the flushes' updates from being HOT updates).
 */
const PURGE_ENDED_SQL = 'DELETE FROM rate_limit_windows WHERE window_start < $1';

/**
 * Per-key rate limits shared by every gateway replica, in fixed one-second windows. Each replica
 * decides from what it knows (the shared count as last read, plus its own admissions since) and
 * adds its admissions to the key's row in PostgreSQL, reading back the sum: at a window's first
 * request, at least every RATE_LIMIT_FLUSH_MS while the key is in use, and whenever half of the
 * admissions it may hold unshared (a tenth of the limit) are there — off the request path. Only a
 * request that finds a full tenth unshared (a burst faster than the flushes) waits for one.
 *
 * What a replica knows never exceeds the true count, so a key under its limit is never refused.
 * Each other replica's unshared admissions, at most a tenth of the limit, may pass it: a window
 * admits at most limit × (1 + (replicas − 1) / 10). A flush that fails is counted as this
 * replica's own and the API stays open: an unreachable store must not refuse every request.
 */
@Injectable()
export class RateLimiter implements OnModuleDestroy {
  private readonly windows = new Map<string, WindowCount>();
  private readonly defaults: RateLimitDefaults;
  private readonly sweep: NodeJS.Timeout;
  private readonly purge: NodeJS.Timeout;
  private lastFailureLoggedAt = 0;
  private readonly logger = new JsonLogger('gateway');

  constructor(
    private readonly prisma: PrismaService,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    @Inject(CLOCK) private readonly now: Clock,
  ) {
    this.defaults = config.rateLimits;
    // Counts of ended windows are of no use: forget them.
    this.sweep = setInterval(() => {
      const current = Math.floor(this.now().getTime() / 1000);
      for (const [id, count] of this.windows) if (count.windowStart < current - 1 && !count.flushing) this.windows.delete(id);
    }, 5_000).unref();
    this.purge = setInterval(() => {
      this.purgeEndedWindows(this.now().getTime()).catch((error: Error) => this.logger.warn(`rate limit windows not purged: ${error.message}`));
    }, RATE_LIMIT_PURGE_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweep);
    clearInterval(this.purge);
  }

  /** Deletes the shared rows of windows that ended RATE_LIMIT_ENDED_WINDOW_KEPT_SECONDS ago or more; answers how many. */
  async purgeEndedWindows(nowMs: number): Promise<number> {
    const before = Math.floor(nowMs / 1000) - RATE_LIMIT_ENDED_WINDOW_KEPT_SECONDS;
    return (await this.prisma.pool.query(PURGE_ENDED_SQL, [before])).rowCount ?? 0;
  }

  /** The limit of the caller's key for this class: its app's own, else the default of its mode. */
  limitOf(caller: Caller, kind: RateLimitClass): number {
    const own = kind === 'read' ? caller.rateLimits.readPerSecond : caller.rateLimits.writePerSecond;
    return own ?? (caller.tenant.livemode ? this.defaults.livePerSecond : this.defaults.sandboxPerSecond);
  }

  /** Admits one request of `keyId` or refuses it: at once, unless this replica holds a full tenth of the limit unshared. */
  take(keyId: string, kind: RateLimitClass, limit: number, nowMs: number): RateLimitDecision | Promise<RateLimitDecision> {
    const windowStart = Math.floor(nowMs / 1000);
    const resetSeconds = Math.max(1, Math.ceil((windowStart * 1000 + 1000 - nowMs) / 1000));
    const id = `${keyId} ${kind}`;
    let count = this.windows.get(id);
    if (!count || count.windowStart !== windowStart) {
      // lastFlushAt 0: the window's first admission is flushed at once, reading the others' count.
      count = { windowStart, shared: 0, pending: 0, lastFlushAt: 0, flushing: undefined };
      this.windows.set(id, count);
    }
    const used = count.shared + count.pending;
    if (used >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    const unsharedMax = rateLimitUnsharedMax(limit);
    if (count.pending < unsharedMax) {
      count.pending += 1;
      if (!count.flushing && (count.pending * 2 >= unsharedMax || nowMs - count.lastFlushAt >= RATE_LIMIT_FLUSH_MS)) void this.flush(keyId, kind, count, nowMs);
      return { allowed: true, limit, remaining: limit - used - 1, resetSeconds };
    }
    // The others cannot see this replica's last tenth yet: decide once they can.
    const flushed = count.flushing ?? this.flush(keyId, kind, count, nowMs);
    return flushed.then(() => this.take(keyId, kind, limit, this.now().getTime()));
  }

  private flush(keyId: string, kind: RateLimitClass, count: WindowCount, nowMs: number): Promise<void> {
    const adding = count.pending;
    count.lastFlushAt = nowMs;
    count.flushing = (async () => {
      try {
        const { rows } = await this.prisma.pool.query<{ window_start: string; taken: number }>(FLUSH_SQL, [keyId, kind, count.windowStart, adding]);
        // A row already in a newer window (this replica's clock is behind): nothing to learn for this one.
        count.shared = Number(rows[0].window_start) === count.windowStart ? rows[0].taken : count.shared + adding;
      } catch (error) {
        // Unshared, the admissions still count here: this replica limits on its own count meanwhile.
        count.shared += adding;
        if (nowMs - this.lastFailureLoggedAt > 60_000) {
          this.lastFailureLoggedAt = nowMs;
          this.logger.warn(`rate limit counts not shared (each replica limits on its own count meanwhile): ${(error as Error).message}`);
        }
      } finally {
        count.pending -= adding;
        count.flushing = undefined;
      }
    })();
    return count.flushing;
  }
}
