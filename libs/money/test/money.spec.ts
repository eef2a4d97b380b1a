import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { DomainError } from '@recur/kernel';
import {
  add, AMOUNT_MAX, assertSameCurrency, checkCurrencyCode, compare, CURRENCY_CODES, currencyExponent, CurrencyMismatchError, equals, formatMoney, fromInt64,
  ISO_4217_PUBLISHED, isCurrencyCode, min, money, multiply, percentOf, roundHalfUp, subtract, sum, toDecimalString, toInt64, zero,
} from '../src';

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('the currency table', () => {
  it('gives each currency its ISO 4217 exponent', () => {
    expect([currencyExponent('usd'), currencyExponent('eur'), currencyExponent('jpy'), currencyExponent('krw')]).toEqual([2, 2, 0, 0]);
    expect([currencyExponent('kwd'), currencyExponent('bhd'), currencyExponent('clf'), currencyExponent('isk')]).toEqual([3, 3, 4, 0]);
  });

  it('follows the ISO list shipped with currency-codes, entry by entry', () => {
    // The package ships ISO's own list one (XML); every code with a numeric minor unit must
    // be accepted with exactly that exponent, every "N.A." code (gold, SDR, testing) refused.
    const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
    expect(xml).toContain(`Pblshd="${ISO_4217_PUBLISHED}"`);
    const entries = new Map<string, string>();
    for (const [, code, units] of xml.matchAll(/<Ccy>([A-Z]{3})<\/Ccy>[\s\S]*?<CcyMnrUnts>([^<]+)<\/CcyMnrUnts>/g)) entries.set(code.toLowerCase(), units);
    expect(entries.size).toBeGreaterThan(170);
    for (const [code, units] of entries) {
      if (units === 'N.A.') expect([code, isCurrencyCode(code)]).toEqual([code, false]);
      else expect([code, currencyExponent(code)]).toEqual([code, Number(units)]);
    }
    expect(CURRENCY_CODES).toEqual([...entries.keys()].filter((code) => entries.get(code) !== 'N.A.').sort());
  });

  it('refuses unknown, uppercase and no-minor-unit codes, naming the field', () => {
    for (const code of ['xyz', 'USD', 'usd ', '', 'xau', 'xts']) {
      expect(failure(() => checkCurrencyCode(code, 'plan.currency'))).toMatchObject({ code: 'parameter_invalid', param: 'plan.currency' });
    }
    expect(checkCurrencyCode('chf')).toBe('chf');
    expect(failure(() => currencyExponent('xyz'))).toMatchObject({ param: 'currency' });
    expect(failure(() => money(1, 'xxx'))).toMatchObject({ code: 'parameter_invalid', param: 'currency' });
  });
});

describe('Money', () => {
  it('is an integer of minor units, immutable', () => {
    const price = money(2_900, 'usd');
    expect(price).toEqual({ amountMinor: 2_900, currency: 'usd' });
    expect(Object.isFrozen(price)).toBe(true);
    expect(failure(() => money(29.5, 'usd'))).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    expect(failure(() => money(Number.MAX_SAFE_INTEGER + 1, 'usd'))).toMatchObject({ code: 'amount_too_large', kind: 'invalid_argument', param: 'amount' });
    expect(money(-5, 'usd').amountMinor).toBe(-5);
    expect(AMOUNT_MAX).toBe(10 ** 12 - 1);
  });

  it('adds, subtracts, multiplies and sums within one currency', () => {
    expect(add(money(2_900, 'usd'), money(100, 'usd'))).toEqual(money(3_000, 'usd'));
    expect(subtract(money(2_900, 'usd'), money(3_000, 'usd'))).toEqual(money(-100, 'usd'));
    expect(multiply(money(2_900, 'usd'), 12)).toEqual(money(34_800, 'usd'));
    expect(sum('eur', [money(1, 'eur'), money(2, 'eur'), money(3, 'eur')])).toEqual(money(6, 'eur'));
    expect(sum('jpy', [])).toEqual(zero('jpy'));
    expect(failure(() => multiply(money(100, 'usd'), 1.5))).toMatchObject({ param: 'factor' });
    expect(failure(() => multiply(money(AMOUNT_MAX, 'usd'), 10_000))).toMatchObject({ code: 'amount_too_large' });
    expect(failure(() => add(money(Number.MAX_SAFE_INTEGER, 'usd'), money(1, 'usd')))).toMatchObject({ code: 'amount_too_large' });
    expect(failure(() => subtract(money(-Number.MAX_SAFE_INTEGER, 'usd'), money(1, 'usd')))).toMatchObject({ code: 'amount_too_large' });
  });

  it('refuses to mix currencies with a typed error and a stable code', () => {
    const usd = money(100, 'usd');
    const eur = money(100, 'eur');
    for (const mixed of [() => add(usd, eur), () => subtract(usd, eur), () => compare(usd, eur), () => min(usd, eur), () => sum('usd', [usd, eur]), () => assertSameCurrency(usd, eur)]) {
      const error = failure(mixed);
      expect(error).toBeInstanceOf(CurrencyMismatchError);
      expect(error.name).toBe('CurrencyMismatchError');
      expect(error).toMatchObject({ kind: 'failed_precondition', code: 'currency_mismatch', expected: 'usd', actual: 'eur' });
      expect(error.message).toBe('Amounts in usd and eur cannot be combined.');
    }
    expect(failure(() => sum('usd', [eur]))).toMatchObject({ code: 'currency_mismatch' });
    expect(equals(usd, eur)).toBe(false);
    expect(equals(usd, money(100, 'usd'))).toBe(true);
    expect(equals(usd, money(101, 'usd'))).toBe(false);
  });

  it('compares and picks the smaller amount', () => {
    expect(compare(money(1, 'usd'), money(2, 'usd'))).toBe(-1);
    expect(compare(money(2, 'usd'), money(2, 'usd'))).toBe(0);
    expect(compare(money(3, 'usd'), money(2, 'usd'))).toBe(1);
    expect(min(money(3, 'usd'), money(2, 'usd'))).toEqual(money(2, 'usd'));
    expect(min(money(2, 'usd'), money(3, 'usd'))).toEqual(money(2, 'usd'));
  });
});

describe('rounding: half up on the minor unit', () => {
  it('rounds halves up and everything else to the nearest unit', () => {
    expect([roundHalfUp(25, 2), roundHalfUp(24, 2), roundHalfUp(26, 4), roundHalfUp(7, 4), roundHalfUp(0, 3)]).toEqual([13, 12, 7, 2, 0]);
    expect([roundHalfUp(-25, 2), roundHalfUp(-24, 2), roundHalfUp(-7, 4)]).toEqual([-13, -12, -2]);
    expect(failure(() => roundHalfUp(1, 0))).toMatchObject({ param: 'denominator' });
    expect(failure(() => roundHalfUp(1, -2))).toMatchObject({ param: 'denominator' });
  });

  it('takes a percentage in basis points, half up', () => {
    expect(percentOf(money(2_900, 'usd'), 15)).toEqual(money(435, 'usd'));
    expect(percentOf(money(1_001, 'usd'), 12.5)).toEqual(money(125, 'usd')); // 125.125
    expect(percentOf(money(25, 'usd'), 50)).toEqual(money(13, 'usd')); // 12.5
    expect(percentOf(money(999, 'jpy'), 0.01)).toEqual(money(0, 'jpy')); // 0.0999
    expect(percentOf(money(5_000, 'jpy'), 0.01)).toEqual(money(1, 'jpy')); // 0.5
    expect(percentOf(money(2_900, 'usd'), 100)).toEqual(money(2_900, 'usd'));
    expect(percentOf(money(2_900, 'usd'), 0)).toEqual(money(0, 'usd'));
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(failure(() => percentOf(money(1, 'usd'), bad))).toMatchObject({ param: 'percent' });
  });

  it('stays exact beyond 2^53 intermediate products', () => {
    // 9 007 199 254 740 991 × 1 250 bp overflows a double; the exact answer is 1 125 899 906 842 623.875 → …624.
    expect(percentOf(money(Number.MAX_SAFE_INTEGER, 'usd'), 12.5).amountMinor).toBe(1_125_899_906_842_624);
    expect(percentOf(money(Number.MAX_SAFE_INTEGER, 'usd'), 100).amountMinor).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('matches exact rational rounding for every amount and basis point (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 10_000 }), (amount, basisPoints) => {
        const got = BigInt(percentOf(money(amount, 'usd'), basisPoints / 100).amountMinor);
        const exact2 = BigInt(amount) * BigInt(basisPoints) * 2n; // twice the exact value × 10 000
        // got is the nearest integer with halves up: got − exact ∈ (−½, ½], so the distance in
        // 1/20 000ths lies in (−10 000, 10 000] (a tie lands on +10 000).
        const distance = 2n * got * 10_000n - exact2;
        expect(distance > -10_000n && distance <= 10_000n).toBe(true);
      }),
    );
    // The tie fast-check once found, pinned: 8.52 % of 4 423 630 280 228 750 is …875 489.5 → …875 490.
    expect(percentOf(money(4_423_630_280_228_750, 'usd'), 8.52).amountMinor).toBe(376_893_299_875_490);
  });
});

describe('display and storage', () => {
  it('writes the exact decimal with the currency exponent', () => {
    expect(toDecimalString(money(2_900, 'usd'))).toBe('29.00');
    expect(toDecimalString(money(5, 'usd'))).toBe('0.05');
    expect(toDecimalString(money(0, 'usd'))).toBe('0.00');
    expect(toDecimalString(money(0, 'jpy'))).toBe('0');
    expect(toDecimalString(money(-5, 'kwd'))).toBe('-0.005');
    expect(toDecimalString(money(500, 'jpy'))).toBe('500');
    expect(toDecimalString(money(-500, 'jpy'))).toBe('-500');
    expect(toDecimalString(money(12_345, 'clf'))).toBe('1.2345');
    expect(toDecimalString(money(Number.MAX_SAFE_INTEGER, 'usd'))).toBe('90071992547409.91');
  });

  it('formats for people with the currency and its digits', () => {
    expect(formatMoney(money(2_900, 'usd'))).toBe('$29.00');
    expect(formatMoney(money(123_456_789, 'usd'))).toBe('$1,234,567.89');
    expect(formatMoney(money(500, 'jpy'))).toBe('¥500');
    expect(formatMoney(money(1_500, 'kwd'))).toBe('KWD\u00a01.500');
    expect(formatMoney(money(2_900, 'eur'), 'de-DE')).toBe('29,00\u00a0€');
    // Exact beyond a double's precision (a float would print …740992.00).
    expect(formatMoney(money(Number.MAX_SAFE_INTEGER, 'usd'))).toBe('$90,071,992,547,409.91');
  });

  it('converts int64 (gRPC fields, BIGINT columns) and back, refusing what a number cannot hold exactly', () => {
    expect(fromInt64(999_999_999_999n)).toBe(AMOUNT_MAX);
    expect(fromInt64(-3n)).toBe(-3);
    expect([fromInt64(undefined), toInt64(undefined)]).toEqual([undefined, undefined]); // absent optional fields stay absent
    expect(toInt64(AMOUNT_MAX)).toBe(999_999_999_999n);
    expect(fromInt64(-(2n ** 53n) + 1n)).toBe(-Number.MAX_SAFE_INTEGER);
    expect(failure(() => fromInt64(2n ** 53n, 'unit_amount'))).toMatchObject({ kind: 'invalid_argument', code: 'parameter_invalid', param: 'unit_amount' });
    expect(failure(() => fromInt64(-(2n ** 53n)))).toMatchObject({ param: 'amount' });
    expect(failure(() => toInt64(1.5, 'up_to'))).toMatchObject({ code: 'parameter_invalid', param: 'up_to' });
    expect(failure(() => toInt64(2 ** 53))).toMatchObject({ code: 'parameter_invalid', param: 'amount' });
    fc.assert(fc.property(fc.maxSafeInteger(), (value) => expect(fromInt64(toInt64(value))).toBe(value)));
  });
});
