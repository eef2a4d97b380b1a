import { crossedThresholds, effectiveLimit } from '../src/usage/usage';

describe('crossedThresholds', () => {
  it.each([
    [0n, 79n, 100n, []],
    [79n, 80n, 100n, [80]],
    [79n, 81n, 100n, [80]],
    [80n, 99n, 100n, []],
    [99n, 100n, 100n, [100]],
    [0n, 150n, 100n, [80, 100]],
    [100n, 200n, 100n, []],
    // 80 % of 7 is 5.6: reached at 6, not at 5.
    [4n, 5n, 7n, []],
    [5n, 6n, 7n, [80]],
    // A limit of 0 is reached by the first unit used, never by none.
    [0n, 0n, 0n, []],
    [0n, 1n, 0n, [80, 100]],
    // Beyond a double's exact integers.
    [7_999_999_999_999_999n, 8_000_000_000_000_000n, 10_000_000_000_000_000n, [80]],
  ])('from %p to %p of %p crosses %p', (before, after, limit, expected) => {
    expect(crossedThresholds(before, after, limit)).toEqual(expected);
  });
});

describe('effectiveLimit', () => {
  const component = { metricName: 'api_calls', includedQuantity: 0, usageLimit: 500n };
  it('takes the subscription override first, then the plan component, else none', () => {
    expect(effectiveLimit(component, 100n)).toEqual({ limit: 100n, source: 'subscription' });
    expect(effectiveLimit(component, undefined)).toEqual({ limit: 500n, source: 'plan' });
    expect(effectiveLimit({ ...component, usageLimit: null }, undefined)).toEqual({ limit: null, source: 'none' });
    expect(effectiveLimit(undefined, 0n)).toEqual({ limit: 0n, source: 'subscription' });
  });
});
