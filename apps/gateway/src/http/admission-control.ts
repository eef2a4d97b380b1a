import { admissionInFlight, admissionLimit, admissionQueued, admissionRefused } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './api-error';
import { requestState } from './request-context';

/**
 * How much `/v1` work one gateway process takes on at once (docs/operations/configuration.md#admission-control).
 * The limit of requests in flight adapts between `minInFlight` and `maxInFlight` (see
 * AdmissionControl). Past it, a request waits in a queue of at most `maxQueued`; it is answered
 * `503 service_unavailable` with `Retry-After`, before its body is read, when the queue is full or
 * it waited too long: `queueTimeoutMs` in a burst, `overloadWaitMs` once the queue has stood for
 * OVERLOADED_AFTER_MS (more arrives than the stack serves).
 */
export interface AdmissionLimits {
  /** The least the limit of requests in flight falls to. */
  minInFlight: number;
  /** The most the limit of requests in flight rises to; 0 turns admission control off. */
  maxInFlight: number;
  /** Requests waiting for a slot; more are refused at once. */
  maxQueued: number;
  /** The longest a request waits for a slot in a burst. */
  queueTimeoutMs: number;
  /** The longest a request waits for a slot under overload (the queue has stood OVERLOADED_AFTER_MS). */
  overloadWaitMs: number;
}

/**
 * A queue that has not emptied for this long is a standing queue, not a burst: overload, until
 * the queue has stayed empty this long again. A burst drains within it and waits its turn.
 */
export const OVERLOADED_AFTER_MS = 200;
/** Where the limit starts (within minInFlight and maxInFlight): a fresh process takes a burst without first learning. */
export const INITIAL_LIMIT = 16;
/** Seconds a refused client is told to wait: the overload of a busy second is usually gone in the next. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1;
/** The limit is adjusted once a window has lasted this long and seen LIMIT_WINDOW_SAMPLES requests end. */
export const LIMIT_WINDOW_MS = 100;
export const LIMIT_WINDOW_SAMPLES = 8;
/** A window whose tail time in flight (LEARNED_QUANTILE) exceeds the baseline this many times lowers the limit. */
export const LATENCY_TOLERANCE = 2;
/**
 * The quantile of a window's times in flight the limit learns from, for the baseline and for the
 * check alike: the promise is about admitted requests' p99 (docs/operations/configuration.md#admission-control),
 * so the 99th percentile — in a window of a few dozen requests, its slowest. A median kept within
 * twice its baseline let the tail reach five times the unloaded p99; the 90th percentile, four.
 */
export const LEARNED_QUANTILE = 0.99;
/**
 * A used-up window in which the event loop was busy more than this share of its time lowers the
 * limit, whatever its times in flight: on a saturated loop a request waits before admission sees
 * it (to be read, parsed and routed behind every other), a wait no time in flight includes.
 */
export const BUSY_LOOP_CEILING = 0.9;
/** The share of the limit a slow window takes off. */
const DECREASE = 0.9;
/** How much of each unhurried window's tail the baseline takes in (an exponentially weighted mean). */
const BASELINE_WEIGHT = 0.1;

/** The share of the time since the previous call that this process's event loop was busy. */
function eventLoopBusy(): () => number {
  let since = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, since).utilization;
    since = now;
    return busy;
  };
}

interface Waiter {
  since: number;
  settle(admitted: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * A limit of requests in flight that adapts to the time they take, and a bounded queue in front,
 * first in, first out, dropping from its head what waited too long (as CoDel does, Nichols and
 * Jacobson 2012). The limit follows TCP Vegas's idea, as Netflix's concurrency-limits does. A
 * window (LIMIT_WINDOW_MS and LIMIT_WINDOW_SAMPLES) that did not use the whole limit shows what a
 * request takes when it does not wait for others: its tail (LEARNED_QUANTILE) feeds the baseline
 * (a weighted mean). A window that used the whole limit lowers it by a tenth when its tail exceeds
 * LATENCY_TOLERANCE times the baseline or the event loop was busy more than BUSY_LOOP_CEILING of
 * the window, and raises it by one otherwise. So a saturated stack works
 * on about as many requests as keeps their tail within twice its unhurried tail, and what comes on top
 * waits at most `overloadWaitMs` or is refused — a fast 503 the client can retry — instead of
 * every request queueing until all are late. Under a long overload the baseline stands still
 * (no window leaves the limit unused), so the limit does not creep up with the overload's own
 * latency. Until a first unhurried window there is no baseline and the limit only rises. With
 * `minInFlight` equal to `maxInFlight` the limit is fixed.
 */
export class AdmissionControl {
  private inFlight = 0;
  private limit: number;
  private readonly queue: Waiter[] = [];
  /** Since when the queue has held a request without emptying; undefined while it is empty. */
  private queuedSince: number | undefined;
  /** Since when the queue has been empty; undefined while it holds a request. */
  private emptySince: number | undefined = 0;
  private overloadedNow = false;
  private window = { start: 0, samples: [] as number[], fullyUsed: false };
  private baseline = Number.POSITIVE_INFINITY;

  /**
   * `loopBusy` answers the share of the time since its last call that the event loop was busy
   * (0 to 1): Node.js's event loop utilization by default.
   */
  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: () => number = () => performance.now(),
    private readonly loopBusy: () => number = eventLoopBusy(),
  ) {
    this.limit = Math.min(limits.maxInFlight, Math.max(limits.minInFlight, INITIAL_LIMIT));
    this.window.start = now();
    admissionLimit.set(this.limit);
  }

  /** The limit of requests in flight now. */
  get currentLimit(): number {
    return this.limit;
  }

  /** Whether the queue stands (OVERLOADED_AFTER_MS without emptying; over once empty as long): the short wait applies. */
  overloaded(now: number): boolean {
    if (!this.overloadedNow && this.queuedSince !== undefined && now - this.queuedSince >= OVERLOADED_AFTER_MS) this.overloadedNow = true;
    if (this.overloadedNow && this.emptySince !== undefined && now - this.emptySince >= OVERLOADED_AFTER_MS) this.overloadedNow = false;
    return this.overloadedNow;
  }

  /**
   * Takes a slot for a request: `admitted` at once, or `refused` (the queue is full), or a place
   * in the queue: `turn` resolves true once a slot is the request's, false when it waited too
   * long; `cancel()` takes it out of the queue (its client went away; `turn` then never settles).
   */
  enter(): 'admitted' | 'refused' | { turn: Promise<boolean>; cancel(): void } {
    if (this.inFlight < this.limit && this.queue.length === 0) {
      this.take();
      return 'admitted';
    }
    if (this.queue.length >= this.limits.maxQueued) {
      admissionRefused.inc({ reason: 'queue_full' });
      return 'refused';
    }
    const now = this.now();
    if (this.queue.length === 0) {
      this.queuedSince = now;
      this.emptySince = undefined;
    }
    const wait = this.overloaded(now) ? this.limits.overloadWaitMs : this.limits.queueTimeoutMs;
    let waiter!: Waiter;
    const turn = new Promise<boolean>((resolve) => {
      waiter = {
        since: now,
        settle: resolve,
        timer: setTimeout(() => {
          this.remove(waiter);
          admissionRefused.inc({ reason: 'waited_too_long' });
          resolve(false);
        }, wait),
      };
    });
    this.queue.push(waiter);
    admissionQueued.set(this.queue.length);
    return { turn, cancel: () => this.remove(waiter) };
  }

  /**
   * Gives a slot back, with the time its request was in flight (none for one that never ran):
   * the limit learns from it, and the longest waiters take the free slots, unless under overload
   * they waited too long (refused).
   */
  leave(inFlightMs?: number): void {
    this.inFlight--;
    const now = this.now();
    if (inFlightMs !== undefined) this.learn(inFlightMs, now);
    while (this.inFlight < this.limit && this.queue.length > 0) {
      const next = this.queue.shift()!;
      clearTimeout(next.timer);
      if (this.queue.length === 0) this.emptied(now);
      if (this.overloaded(now) && now - next.since > this.limits.overloadWaitMs) {
        admissionRefused.inc({ reason: 'waited_too_long' });
        next.settle(false);
        continue;
      }
      this.take();
      next.settle(true);
    }
    admissionQueued.set(this.queue.length);
    admissionInFlight.set(this.inFlight);
  }

  private take(): void {
    this.inFlight++;
    if (this.inFlight >= this.limit) this.window.fullyUsed = true;
    admissionInFlight.set(this.inFlight);
  }

  private emptied(now: number): void {
    this.queuedSince = undefined;
    this.emptySince = now;
  }

  /** Adds a time in flight to the window; a window long enough adjusts the limit (see the class). */
  private learn(inFlightMs: number, now: number): void {
    const window = this.window;
    window.samples.push(inFlightMs);
    if (now - window.start < LIMIT_WINDOW_MS || window.samples.length < LIMIT_WINDOW_SAMPLES) return;
    const samples = window.samples.sort((a, b) => a - b);
    const tail = samples[Math.min(samples.length - 1, Math.floor(samples.length * LEARNED_QUANTILE))];
    const loopBusy = this.loopBusy();
    if (!window.fullyUsed) {
      // Below the limit, the time in flight is the stack's own, not the limit's doing: it is the baseline.
      this.baseline = this.baseline === Number.POSITIVE_INFINITY ? tail : this.baseline + BASELINE_WEIGHT * (tail - this.baseline);
    } else if (tail > LATENCY_TOLERANCE * this.baseline || loopBusy > BUSY_LOOP_CEILING) {
      this.limit = Math.max(this.limits.minInFlight, Math.floor(this.limit * DECREASE));
    } else {
      this.limit = Math.min(this.limits.maxInFlight, this.limit + 1);
    }
    admissionLimit.set(this.limit);
    this.window = { start: now, samples: [], fullyUsed: this.inFlight >= this.limit };
  }

  private remove(waiter: Waiter): void {
    const at = this.queue.indexOf(waiter);
    if (at < 0) return;
    this.queue.splice(at, 1);
    clearTimeout(waiter.timer);
    admissionQueued.set(this.queue.length);
    if (this.queue.length === 0) this.emptied(this.now());
  }

  /**
   * The `/v1` route's first hook (routing/api-route.ts): admits the request, or answers it 503.
   * The slot is given back when the response closes, answered or abandoned.
   */
  hook() {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
      if (this.limits.maxInFlight === 0) return undefined;
      const entry = this.enter();
      let admitted = entry === 'admitted';
      if (typeof entry === 'object') {
        const waiting = entry;
        let gone = false;
        const onGone = () => {
          gone = true;
          waiting.cancel();
        };
        reply.raw.once('close', onGone);
        admitted = await waiting.turn;
        reply.raw.off('close', onGone);
        if (gone) {
          // Its client left as it was given the slot (the close event and the turn in one tick): the slot goes on.
          if (admitted) this.leave();
          return undefined;
        }
      }
      if (admitted) {
        const admittedAt = this.now();
        reply.raw.once('close', () => this.leave(this.now() - admittedAt));
        return undefined;
      }
      const refusal = new ApiError(503, 'service_unavailable', `The API is at capacity: retry after ${ADMISSION_RETRY_AFTER_SECONDS} s.`);
      // Sent here, not thrown: a refusal is expected under overload and is not logged as a failure.
      return reply.code(503).header('Retry-After', ADMISSION_RETRY_AFTER_SECONDS).send(errorBody(refusal, requestState(request.raw)?.requestId ?? 'req_unknown'));
    };
  }
}
