/**
 * kafkajs 2.2.4 (the last release; the project is unmaintained) re-arms a 1 ms timer for ever on
 * every broker connection that has nothing pending and is not throttled: its request queue's
 * `scheduleCheckPendingRequests` passes `throttledUntil - Date.now()` (negative when not
 * throttled) to setTimeout, which runs it after 1 ms, and the check schedules itself again
 * (tulios/kafkajs#1556, #1704; the fix of #1667/#1768 was never released). Every process with a
 * producer or consumer woke ~1 700 times a second doing nothing: its CPU at rest, paid under load
 * too (docs/performance.md).
 *
 * This replaces that one method with the fix the issues settled on: with nothing pending and no
 * throttle, schedule nothing. A request pushed while it cannot be sent schedules a check (pending
 * is then non-empty), and a fulfilled request checks the queue itself, so no request waits longer.
 */
import { createRequire } from 'node:module';

interface RequestQueue {
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  pending: unknown[];
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's own interval for re-checking a queue with pending requests (CHECK_PENDING_REQUESTS_INTERVAL). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** kafkajs's RequestQueue class (a CommonJS module with no `exports` map, so its file can be required). */
export const KafkaRequestQueue = createRequire(require.resolve('kafkajs'))('./src/network/requestQueue') as { prototype: RequestQueue };

KafkaRequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueue): void {
  if (this.throttleCheckTimeoutId) return;
  // eslint-disable-next-line no-restricted-syntax -- kafkajs stamps throttledUntil with the wall clock
  const untilUnthrottled = this.throttledUntil - Date.now();
  let delay: number;
  if (this.pending.length > 0) delay = untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS;
  else if (untilUnthrottled > 0) delay = untilUnthrottled;
  else return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
};
