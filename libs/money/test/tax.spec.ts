import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { allocate, exclusiveTax, formatPercentage, money, parsePercentage, splitInclusive, type TaxRateTerms, taxInvoice, zero } from '../src';

const VAT_ZM: TaxRateTerms = { id: 'txr_zm', displayName: 'VAT', ratePpm: 160_000, inclusive: false };
const VAT_SN: TaxRateTerms = { id: 'txr_sn', displayName: 'TVA', ratePpm: 180_000, inclusive: true };

function failure(run: () => unknown): DomainError {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('percentages', () => {
  it('are read exactly, with up to four decimals, as parts per million', () => {
    expect([parsePercentage(16), parsePercentage(7.5), parsePercentage('18.0001'), parsePercentage(0), parsePercentage(100)]).toEqual([160_000, 75_000, 180_001, 0, 1_000_000]);
    expect([formatPercentage(160_000), formatPercentage(75_000), formatPercentage(180_001), formatPercentage(0)]).toEqual(['16', '7.5', '18.0001', '0']);
    for (const bad of [100.0001, -1, 7.12345, Number.NaN, '1e1', '', '12.', 1e21]) {
      expect(failure(() => parsePercentage(bad as number))).toMatchObject({ code: 'parameter_invalid', param: 'percentage' });
    }
  });

  it('round-trip through their text for every four-decimal value', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000_000 }), (ppm) => expect(parsePercentage(Number(formatPercentage(ppm)))).toBe(ppm)));
  });
});

describe('worked examples', () => {
  it('16 % exclusive (Zambia): tax on top, rounded half up per line', () => {
    expect(exclusiveTax(money(10_000, 'zmw'), 160_000)).toEqual(money(1_600, 'zmw'));
    expect(exclusiveTax(money(12_345, 'zmw'), 160_000)).toEqual(money(1_975, 'zmw')); // 1 975.2
    expect(exclusiveTax(money(25, 'zmw'), 180_000)).toEqual(money(5, 'zmw')); // 4.5 → 5, half up
    const invoice = taxInvoice('zmw', [{ amount: money(10_000, 'zmw'), taxRate: VAT_ZM }, { amount: money(12_345, 'zmw'), taxRate: VAT_ZM }], zero('zmw'));
    expect(invoice.lines.map((line) => line.taxAmounts[0].amount.amountMinor)).toEqual([1_600, 1_975]);
    expect(invoice.totalTaxAmounts).toEqual([{ taxRate: VAT_ZM, taxableAmount: money(22_345, 'zmw'), amount: money(3_575, 'zmw') }]);
    expect([invoice.subtotal, invoice.tax, invoice.total, invoice.totalExcludingTax].map((m) => m.amountMinor)).toEqual([22_345, 3_575, 25_920, 22_345]);
  });

  it('18 % inclusive (Senegal, XOF has no minor digits): the price stays the total', () => {
    expect(splitInclusive(money(10_000, 'xof'), 180_000)).toEqual({ net: money(8_475, 'xof'), tax: money(1_525, 'xof') }); // 1 525.42
    expect(splitInclusive(money(5_900, 'xof'), 180_000)).toEqual({ net: money(5_000, 'xof'), tax: money(900, 'xof') });
    const invoice = taxInvoice('xof', [{ amount: money(10_000, 'xof'), taxRate: VAT_SN }, { amount: money(5_900, 'xof'), taxRate: VAT_SN }], zero('xof'));
    expect(invoice.totalTaxAmounts).toEqual([{ taxRate: VAT_SN, taxableAmount: money(13_475, 'xof'), amount: money(2_425, 'xof') }]);
    expect([invoice.subtotal, invoice.tax, invoice.total, invoice.totalExcludingTax].map((m) => m.amountMinor)).toEqual([15_900, 2_425, 15_900, 13_475]);
  });

  it('a discount is shared over the lines before tax; an untaxed line carries none', () => {
    const invoice = taxInvoice('zmw', [{ amount: money(10_000, 'zmw'), taxRate: VAT_ZM }, { amount: money(5_000, 'zmw'), taxRate: null }], money(1_500, 'zmw'));
    expect(invoice.lines.map((line) => line.discount.amountMinor)).toEqual([1_000, 500]);
    expect(invoice.lines[0].taxAmounts[0]).toMatchObject({ taxableAmount: money(9_000, 'zmw'), amount: money(1_440, 'zmw') });
    expect(invoice.lines[1].taxAmounts).toEqual([]);
    expect(invoice.total.amountMinor).toBe(10_000 + 5_000 - 1_500 + 1_440);
  });
});

describe('allocate', () => {
  it('shares by largest remainder, ties to the earlier weight', () => {
    expect(allocate(money(100, 'usd'), [1, 1, 1]).map((m) => m.amountMinor)).toEqual([34, 33, 33]);
    expect(allocate(money(-100, 'usd'), [1, 1, 1]).map((m) => m.amountMinor)).toEqual([-34, -33, -33]);
    expect(allocate(money(0, 'usd'), [0, 0]).map((m) => m.amountMinor)).toEqual([0, 0]);
    expect(failure(() => allocate(money(1, 'usd'), [0]))).toMatchObject({ param: 'weights' });
  });
});

// Properties: the invariants the invoice's figures rest on, over random lines, rates and discounts.
const rateArb = fc.record({ id: fc.constantFrom('txr_a', 'txr_b', 'txr_c'), displayName: fc.constant('VAT'), ratePpm: fc.integer({ min: 0, max: 1_000_000 }), inclusive: fc.boolean() });
const linesArb = fc.array(fc.record({ amount: fc.integer({ min: -1_000_000, max: 1_000_000_000 }), taxRate: fc.option(rateArb, { nil: null }) }), { minLength: 1, maxLength: 12 });

describe('properties', () => {
  it('inclusive: net + tax = gross, and the tax never exceeds the gross', () => {
    fc.assert(fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 1_000_000 }), (gross, ppm) => {
      const { net, tax } = splitInclusive(money(gross, 'usd'), ppm);
      expect(net.amountMinor + tax.amountMinor).toBe(gross);
      expect(Math.abs(tax.amountMinor)).toBeLessThanOrEqual(Math.abs(gross));
      // The rounded tax is within half a minor unit of the exact gross × rate / (1 + rate).
      expect(Math.abs(2 * (tax.amountMinor * (1_000_000 + ppm) - gross * ppm))).toBeLessThanOrEqual(1_000_000 + ppm);
    }));
  });

  it('allocate: no minor unit appears or disappears under any split', () => {
    fc.assert(fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 20 }), (amount, weights) => {
      fc.pre(weights.some((weight) => weight > 0));
      const shares = allocate(money(amount, 'usd'), weights);
      expect(shares.reduce((a, b) => a + b.amountMinor, 0)).toBe(amount);
      weights.forEach((weight, index) => { if (weight === 0) expect(shares[index].amountMinor).toBe(0); });
    }));
  });

  it('an invoice: the lines sum to the total, the rates sum to the tax, nothing is lost', () => {
    fc.assert(fc.property(linesArb, fc.integer({ min: 0, max: 100 }), (given, discountPercent) => {
      const lines = given.map((line) => ({ amount: money(line.amount, 'usd'), taxRate: line.taxRate }));
      const positive = given.reduce((a, line) => a + Math.max(line.amount, 0), 0);
      const subtotal = given.reduce((a, line) => a + line.amount, 0);
      const discount = Math.max(0, Math.min(subtotal, Math.floor((positive * discountPercent) / 100)));
      const invoice = taxInvoice('usd', lines, money(discount, 'usd'));
      let total = 0;
      let tax = 0;
      invoice.lines.forEach((line, index) => {
        const charged = given[index].amount - line.discount.amountMinor;
        const taxed = line.taxAmounts[0];
        if (taxed === undefined) return void (total += charged);
        tax += taxed.amount.amountMinor;
        // Inclusive: net + tax is what the line charges; exclusive: the tax comes on top.
        if (taxed.taxRate.inclusive) expect(taxed.taxableAmount.amountMinor + taxed.amount.amountMinor).toBe(charged);
        else expect(taxed.taxableAmount.amountMinor).toBe(charged);
        total += taxed.taxRate.inclusive ? charged : charged + taxed.amount.amountMinor;
      });
      expect(invoice.lines.reduce((a, line) => a + line.discount.amountMinor, 0)).toBe(discount);
      expect(invoice.total.amountMinor).toBe(total);
      expect(invoice.tax.amountMinor).toBe(tax);
      expect(invoice.totalTaxAmounts.reduce((a, rate) => a + rate.amount.amountMinor, 0)).toBe(tax);
      expect(invoice.totalExcludingTax.amountMinor + invoice.tax.amountMinor).toBe(invoice.total.amountMinor);
      expect(invoice.subtotal.amountMinor).toBe(subtotal);
    }), { numRuns: 500 });
  });
});
