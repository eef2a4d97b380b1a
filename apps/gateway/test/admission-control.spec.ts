import { AdmissionControl, BUSY_LOOP_CEILING, LATENCY_TOLERANCE, OVERLOADED_AFTER_MS } from '../src/http/admission-control';

/**
 * On a clock the test moves: the queue's two waits — a burst waits up to queueTimeoutMs for its
 * turn; once the queue has stood for OVERLOADED_AFTER_MS, a request that waited more than
 * overloadWaitMs is refused when a slot frees, and a new one waits that long at most — and the
 * limit of requests in flight: windows that leave it unused teach the baseline; windows that use
 * it raise it while their requests take up to LATENCY_TOLERANCE times the baseline and the event
 * loop was not busy past BUSY_LOOP_CEILING, and lower it otherwise. The event loop is idle unless a
 * test says otherwise.
 */
describe('AdmissionControl', () => {
  let now = 0;
  let loopBusy = 0;
  const idleLoop = () => loopBusy;
  const limits = { minInFlight: 1, maxInFlight: 1, maxQueued: 10, queueTimeoutMs: 5_000, overloadWaitMs: 20 };
  type Queued = { turn: Promise<boolean>; cancel(): void };
  const queued = (entry: ReturnType<AdmissionControl['enter']>): Queued => {
    if (typeof entry !== 'object') throw new Error(`expected a place in the queue, got ${entry}`);
    return entry;
  };

  beforeEach(() => {
    now = 0;
    loopBusy = 0;
  });

  it('lets a burst wait its turn, however long, within the queue timeout', async () => {
    const admission = new AdmissionControl(limits, () => now, idleLoop);
    expect(admission.enter()).toBe('admitted');
    const waiting = queued(admission.enter());
    now += 400;
    admission.leave();
    await expect(waiting.turn).resolves.toBe(true);
  });

  it('under a standing queue, refuses at the head what waited more than the overload wait and admits the next', async () => {
    const admission = new AdmissionControl(limits, () => now, idleLoop);
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
    const admission = new AdmissionControl(limits, () => now, idleLoop);
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
    const admission = new AdmissionControl({ ...limits, maxQueued: 1 }, () => now, idleLoop);
    expect(admission.enter()).toBe('admitted');
    const waiting = queued(admission.enter());
    expect(admission.enter()).toBe('refused');
    waiting.cancel();
    queued(admission.enter()).cancel();
  });

  /** Requests one at a time (the limit, at least 2, never used up), each `inFlightMs` long: they teach the baseline. */
  function unhurried(admission: AdmissionControl, requests: number, inFlightMs: number): void {
    for (let request = 0; request < requests; request++) {
      expect(admission.enter()).toBe('admitted');
      now += inFlightMs;
      admission.leave(inFlightMs);
    }
  }

  /** `rounds` rounds each taking every slot of the limit at once, then ending them after `inFlightMs` (the slowest slot's, if it varies by slot). */
  function load(admission: AdmissionControl, rounds: number, inFlightMs: number | ((slot: number, taken: number) => number)): number[] {
    const timeOf = typeof inFlightMs === 'number' ? () => inFlightMs : inFlightMs;
    const seen = [];
    for (let round = 0; round < rounds; round++) {
      const taken = admission.currentLimit;
      const times = Array.from({ length: taken }, (_, slot) => timeOf(slot, taken));
      for (let slot = 0; slot < taken; slot++) expect(admission.enter()).toBe('admitted');
      now += Math.max(...times);
      for (let slot = 0; slot < taken; slot++) admission.leave(times[slot]);
      seen.push(admission.currentLimit);
    }
    return seen;
  }

  it('raises the limit by one a window while requests take their baseline time and the limit is used, up to maxInFlight', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 30 }, () => now, idleLoop);
    expect(admission.currentLimit).toBe(16);
    const seen = load(admission, 100, 20);
    expect(seen.at(-1)).toBe(30);
    // One step at a time.
    expect(seen.every((limit, i) => i === 0 || limit - seen[i - 1] <= 1)).toBe(true);
  });

  it('lowers the limit while requests take more than LATENCY_TOLERANCE times the baseline, down to minInFlight, and raises it again once they do not', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 20 }, () => now, idleLoop);
    unhurried(admission, 100, 10);
    load(admission, 200, 10);
    expect(admission.currentLimit).toBe(20);
    const slow = load(admission, 100, 10 * (LATENCY_TOLERANCE + 1));
    expect(Math.min(...slow)).toBe(2);
    expect(load(admission, 5, 10 * (LATENCY_TOLERANCE + 1)).at(-1)).toBe(2);
    const recovered = load(admission, 100, 10);
    expect(recovered.at(-1)).toBeGreaterThan(2);
  });

  it('learns from the tail, not the median: a window whose slowest request takes three times the baseline lowers the limit, however quick the rest', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 20 }, () => now, idleLoop);
    unhurried(admission, 100, 10);
    load(admission, 60, 10);
    expect(admission.currentLimit).toBe(20);
    // One slow request in twenty: the 99th percentile of a window of twenty is its slowest.
    const oneSlow = (slot: number, taken: number) => (slot === taken - 1 ? 10 * (LATENCY_TOLERANCE + 1) : 10);
    expect(Math.min(...load(admission, 20, oneSlow))).toBeLessThan(20);
    expect(load(admission, 200, 10).at(-1)).toBe(20);
  });

  it('lowers the limit while the event loop is busy past BUSY_LOOP_CEILING of a used-up window, however quick the requests, and raises it once it is not', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 20 }, () => now, idleLoop);
    unhurried(admission, 100, 10);
    load(admission, 60, 10);
    expect(admission.currentLimit).toBe(20);
    loopBusy = BUSY_LOOP_CEILING;
    expect(Math.min(...load(admission, 60, 10))).toBe(20);
    loopBusy = (BUSY_LOOP_CEILING + 1) / 2;
    expect(Math.min(...load(admission, 300, 10))).toBe(2);
    loopBusy = 0;
    expect(load(admission, 100, 10).at(-1)).toBeGreaterThan(2);
  });

  it('lets a busy loop move nothing while the limit is not used up: the baseline learns, the limit stays', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 8 }, () => now, idleLoop);
    loopBusy = 1;
    unhurried(admission, 200, 10);
    expect(admission.currentLimit).toBe(8);
  });

  it('keeps the limit within twice the baseline: a time in flight at the tolerance lowers nothing', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 4, maxInFlight: 8 }, () => now, idleLoop);
    unhurried(admission, 100, 10);
    load(admission, 60, 10);
    expect(admission.currentLimit).toBe(8);
    expect(Math.min(...load(admission, 60, 10 * LATENCY_TOLERANCE))).toBe(8);
  });

  it('leaves the limit alone while requests stay under it, however long they take (a slower kind of request is not overload); they move the baseline', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 8 }, () => now, idleLoop);
    unhurried(admission, 100, 10);
    load(admission, 60, 10);
    expect(admission.currentLimit).toBe(8);
    unhurried(admission, 400, 100);
    expect(admission.currentLimit).toBe(8);
    // The baseline is now about 100 ms: a full window at 150 ms is within the tolerance.
    expect(Math.min(...load(admission, 60, 150))).toBe(8);
  });

  it('has no baseline before an unhurried window: the limit only rises', () => {
    const admission = new AdmissionControl({ ...limits, minInFlight: 2, maxInFlight: 6 }, () => now, idleLoop);
    expect(load(admission, 60, 1_000).at(-1)).toBe(6);
  });
});
