import fc from 'fast-check';
import { money, taxInvoice, type TaxRateTerms } from '@recur/money';
import { taxCarriedBack } from '../src/credit-notes/credit-note';

/**
 * Tax carried back by credit notes (docs/api/refunds.md#tax-carried-back): over random taxed
 * invoices split into random partial credits, no cent appears or disappears.
 */
const rate = (id: string, ratePpm: number, inclusive: boolean): TaxRateTerms => ({ id, displayName: 'VAT', ratePpm, inclusive }) as TaxRateTerms;
const RATES = [rate('txr_16', 160_000, false), rate('txr_18', 180_000, true), rate('txr_7', 75_000, false)];

const invoices = fc.array(fc.record({ amount: fc.integer({ min: 1, max: 5_000_000 }), rate: fc.integer({ min: -1, max: RATES.length - 1 }) }), { minLength: 1, maxLength: 6 })
  .map((lines) => taxInvoice('zmw', lines.map((line) => ({ amount: money(line.amount, 'zmw'), taxRate: line.rate < 0 ? null : RATES[line.rate] })), money(0, 'zmw')))
  .filter((taxed) => taxed.total.amountMinor > 0);

/** Cuts `total` into positive parts at the `cuts` points (any naturals, folded into 1…total−1); the last part left off when `whole` is false. */
const parts = (total: number, cuts: number[], whole: boolean): number[] => {
  const points = total < 2 ? [] : [...new Set(cuts.map((cut) => 1 + (cut % (total - 1))))].sort((a, b) => a - b);
  const ends = whole ? [...points, total] : points;
  return ends.map((end, index) => end - (index === 0 ? 0 : ends[index - 1]));
};

describe('tax carried back by credit notes', () => {
  it('gives back exactly the invoice\'s tax, rate by rate, when credit notes add up to the total', () => {
    fc.assert(fc.property(invoices, fc.array(fc.nat(), { maxLength: 8 }), (invoice, cuts) => {
      let credited = 0;
      const given = new Map<string, { tax: number; taxable: number }>();
      for (const amount of parts(invoice.total.amountMinor, cuts, true)) {
        const taxes = taxCarriedBack(invoice, credited, credited + amount);
        const tax = taxes.reduce((sum, entry) => sum + entry.amount.amountMinor, 0);
        // A credit note's tax is part of its amount, never more than it.
        expect(Math.abs(tax)).toBeLessThanOrEqual(amount);
        for (const entry of taxes) {
          const sums = given.get(entry.taxRate.id) ?? { tax: 0, taxable: 0 };
          given.set(entry.taxRate.id, { tax: sums.tax + entry.amount.amountMinor, taxable: sums.taxable + entry.taxableAmount.amountMinor });
        }
        credited += amount;
      }
      expect(credited).toBe(invoice.total.amountMinor);
      for (const entry of invoice.totalTaxAmounts) {
        expect(given.get(entry.taxRate.id)).toEqual({ tax: entry.amount.amountMinor, taxable: entry.taxableAmount.amountMinor });
      }
    }));
  });

  it('never gives back more tax than the invoice\'s, nor more net + tax than its total, when the credits stop short', () => {
    fc.assert(fc.property(invoices, fc.array(fc.nat(), { maxLength: 8 }), (invoice, cuts) => {
      let credited = 0;
      let tax = 0;
      for (const amount of parts(invoice.total.amountMinor, cuts, false)) {
        tax += taxCarriedBack(invoice, credited, credited + amount).reduce((sum, entry) => sum + entry.amount.amountMinor, 0);
        credited += amount;
      }
      expect(credited).toBeLessThanOrEqual(invoice.total.amountMinor);
      expect(tax).toBeLessThanOrEqual(invoice.tax.amountMinor);
      // Net + tax of the credit notes is their amount: at most the total.
      expect(credited - tax + tax).toBeLessThanOrEqual(invoice.total.amountMinor);
    }));
  });

  it('worked example: 16 % on 10 000 (tax 1 600), refunded 3 333 + 3 333 + 3 334 + 1 600 of 11 600', () => {
    const invoice = taxInvoice('zmw', [{ amount: money(10_000, 'zmw'), taxRate: RATES[0] }], money(0, 'zmw'));
    expect(invoice.total.amountMinor).toBe(11_600);
    const steps = [[0, 3_333], [3_333, 6_666], [6_666, 10_000], [10_000, 11_600]];
    expect(steps.map(([before, after]) => taxCarriedBack(invoice, before, after)[0].amount.amountMinor)).toEqual([460, 459, 460, 221]);
  });
});
