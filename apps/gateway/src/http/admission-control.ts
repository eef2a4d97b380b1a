import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './api-error';
import { requestState } from './request-context';

/**
 * How much `/v1` work one gateway process takes on at once (docs/operations/configuration.md#admission-control).
 * Past `maxInFlight`, a request waits in a queue of at most `maxQueued`; it is answered
 * `503 service_unavailable` with `Retry-After`, before its body is read, when the queue is full or
 * it waited too long: `queueTimeoutMs` in a burst, `overloadWaitMs` once the queue has not
 * emptied for OVERLOADED_AFTER_MS (a standing queue: more arrives than the stack serves).
 */
export interface AdmissionLimits {
  /** Requests this process works on at once; 0 turns admission control off. */
  maxInFlight: number;
  /** Requests waiting for a free slot; more are refused at once. */
  maxQueued: number;
  /** The longest a request waits for a slot in a burst (the queue emptied lately). */
  queueTimeoutMs: number;
  /** The longest a request waits for a slot under overload (the queue has not emptied for OVERLOADED_AFTER_MS). */
  overloadWaitMs: number;
}

/**
 * A queue that has not emptied for this long is a standing queue, not a burst: overload. A burst
 * (a batch job's first second, a test's 50 requests at once) drains within it and waits its turn.
 */
export const OVERLOADED_AFTER_MS = 500;

/** Seconds a refused client is told to wait: the overload of a busy second is usually gone in the next. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1;

interface Waiter {
  since: number;
  settle(admitted: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * A bounded number of requests in flight and a bounded queue in front of them, first in, first
 * out, dropping from its head what waited too long (as CoDel does, Nichols and Jacobson 2012). A
 * saturated stack serves its peak rate at the latency of `maxInFlight` requests at once; what
 * comes on top waits at most `overloadWaitMs` or is refused — a fast 503 the client can retry —
 * instead of every request queueing in the event loop until all are late.
 */
export class AdmissionControl {
  private inFlight = 0;
  private readonly queue: Waiter[] = [];
  /** Since when the queue has held a request without emptying; undefined while it is empty. */
  private queuedSince: number | undefined;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether the queue has stood for OVERLOADED_AFTER_MS: the short wait applies. */
  private overloaded(now: number): boolean {
    return this.queuedSince !== undefined && now - this.queuedSince >= OVERLOADED_AFTER_MS;
  }

  /**
   * Takes a slot for a request: `admitted` at once, or `refused` (the queue is full), or a place
   * in the queue: `turn` resolves true once a slot is the request's, false when it waited too
   * long; `cancel()` takes it out of the queue (its client went away; `turn` then never settles).
   */
  enter(): 'admitted' | 'refused' | { turn: Promise<boolean>; cancel(): void } {
    if (this.inFlight < this.limits.maxInFlight) {
      this.inFlight++;
      return 'admitted';
    }
    if (this.queue.length >= this.limits.maxQueued) return 'refused';
    const now = this.now();
    this.queuedSince ??= now;
    const wait = this.overloaded(now) ? this.limits.overloadWaitMs : this.limits.queueTimeoutMs;
    let waiter!: Waiter;
    const turn = new Promise<boolean>((resolve) => {
      waiter = {
        since: now,
        settle: resolve,
        timer: setTimeout(() => {
          this.remove(waiter);
          resolve(false);
        }, wait),
      };
    });
    this.queue.push(waiter);
    return { turn, cancel: () => this.remove(waiter) };
  }

  /** Gives a slot back: the longest waiter takes it, unless under overload it waited too long (refused). */
  leave(): void {
    const now = this.now();
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      clearTimeout(next.timer);
      if (this.overloaded(now) && now - next.since > this.limits.overloadWaitMs) {
        next.settle(false);
        continue;
      }
      if (this.queue.length === 0) this.queuedSince = undefined;
      next.settle(true);
      return;
    }
    this.queuedSince = undefined;
    this.inFlight--;
  }

  private remove(waiter: Waiter): void {
    const at = this.queue.indexOf(waiter);
    if (at < 0) return;
    this.queue.splice(at, 1);
    clearTimeout(waiter.timer);
    if (this.queue.length === 0) this.queuedSince = undefined;
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
        reply.raw.once('close', () => this.leave());
        return undefined;
      }
      const refusal = new ApiError(503, 'service_unavailable', `The API is at capacity: retry after ${ADMISSION_RETRY_AFTER_SECONDS} s.`);
      // Sent here, not thrown: a refusal is expected under overload and is not logged as a failure.
      return reply.code(503).header('Retry-After', ADMISSION_RETRY_AFTER_SECONDS).send(errorBody(refusal, requestState(request.raw)?.requestId ?? 'req_unknown'));
    };
  }
}
