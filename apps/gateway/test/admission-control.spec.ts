import { AdmissionControl, OVERLOADED_AFTER_MS } from '../src/http/admission-control';

/**
 * The queue's two waits, on a clock the test moves: a burst (the queue emptied lately) waits up
 * to queueTimeoutMs for its turn; once the queue has stood for OVERLOADED_AFTER_MS, a request that
 * waited more than overloadWaitMs is refused when a slot frees, and a new one waits that long at most.
 */
describe('AdmissionControl', () => {
  let now = 0;
  const limits = { maxInFlight: 1, maxQueued: 10, queueTimeoutMs: 5_000, overloadWaitMs: 20 };
  type Queued = { turn: Promise<boolean>; cancel(): void };
  const queued = (entry: ReturnType<AdmissionControl['enter']>): Queued => {
    if (typeof entry !== 'object') throw new Error(`expected a place in the queue, got ${entry}`);
    return entry;
  };

  beforeEach(() => {
    now = 0;
  });

  it('lets a burst wait its turn, however long, within the queue timeout', async () => {
    const admission = new AdmissionControl(limits, () => now);
    expect(admission.enter()).toBe('admitted');
    const waiting = queued(admission.enter());
    now += 400;
    admission.leave();
    await expect(waiting.turn).resolves.toBe(true);
  });

  it('under a standing queue, refuses at the head what waited more than the overload wait and admits the next', async () => {
    const admission = new AdmissionControl(limits, () => now);
    expect(admission.enter()).toBe('admitted');
    const first = queued(admission.enter());
    now += OVERLOADED_AFTER_MS - 10;
    const second = queued(admission.enter());
    now += 15;
    // The queue has stood OVERLOADED_AFTER_MS: the first waited too long, the second (15 ms) did not.
    admission.leave();
    await expect(first.turn).resolves.toBe(false);
    await expect(second.turn).resolves.toBe(true);
  });

  it('under a standing queue, a new request waits the overload wait at most (real timer)', async () => {
    const admission = new AdmissionControl(limits, () => now);
    expect(admission.enter()).toBe('admitted');
    const first = queued(admission.enter());
    now += OVERLOADED_AFTER_MS;
    const started = Date.now();
    const late = queued(admission.enter());
    await expect(late.turn).resolves.toBe(false);
    expect(Date.now() - started).toBeLessThan(limits.queueTimeoutMs / 2);
    first.cancel();
  });

  it('refuses at once past the queue, and the queue empties when its waiter leaves', () => {
    const admission = new AdmissionControl({ ...limits, maxQueued: 1 }, () => now);
    expect(admission.enter()).toBe('admitted');
    const waiting = queued(admission.enter());
    expect(admission.enter()).toBe('refused');
    waiting.cancel();
    queued(admission.enter()).cancel();
  });
});
