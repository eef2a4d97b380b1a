import { isPercent, isUnixSeconds, UNIX_SECONDS_MAX } from '../src';

describe('bounds', () => {
  it('take unix seconds up to the last second of 9999, as integers, and nothing a Date cannot show', () => {
    expect(new Date(UNIX_SECONDS_MAX * 1000).toISOString()).toBe('9999-12-31T23:59:59.000Z');
    expect([1, 1_795_643_234, UNIX_SECONDS_MAX].every(isUnixSeconds)).toBe(true);
    expect([0, -1, 1.5, UNIX_SECONDS_MAX + 1, 8_640_000_000_000, Number.NaN, Infinity, '1795643234'].some(isUnixSeconds)).toBe(false);
  });

  it('take percentages from 0.01 to 100 in hundredths', () => {
    expect([0.01, 12.34, 33.33, 50, 99.99, 100].every(isPercent)).toBe(true);
    expect([0, 5e-324, 0.001, 0.005, 12.345, 100.01, -5, Number.NaN, Infinity, '50'].some(isPercent)).toBe(false);
  });
});
