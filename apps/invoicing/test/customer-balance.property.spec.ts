import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { adjustedBalance } from '../src/balances/customer-balance';
import { consumeBalance } from '../src/invoices/invoice';

/** The balance arithmetic (docs/api/customer-balance.md): credit is neither made nor lost. */
describe('customer balance arithmetic', () => {
  it('consumes as much credit as an invoice owes and no more, over any sequence of invoices: balance in = balance out', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 20 }), (credit, totals) => {
      let balance = money(-credit, 'zmw');
      let applied = 0;
      for (const total of totals) {
        const after = consumeBalance(money(total, 'zmw'), balance);
        const taken = after.endingBalance.amountMinor - after.startingBalance.amountMinor;
        expect(taken).toBeGreaterThanOrEqual(0);
        expect(after.amountDue.amountMinor + taken).toBe(total);
        expect(after.amountDue.amountMinor).toBeGreaterThanOrEqual(0);
        expect(after.endingBalance.amountMinor).toBeLessThanOrEqual(0);
        // Credit is taken only while the invoice still owes: one or the other reaches zero.
        expect(after.amountDue.amountMinor === 0 || after.endingBalance.amountMinor === 0).toBe(true);
        if (taken > 0) balance = after.endingBalance;
        applied += taken;
      }
      expect(applied + -balance.amountMinor).toBe(credit);
      expect(applied).toBe(Math.min(credit, totals.reduce((a, b) => a + b, 0)));
    }));
  });

  it('leaves a balance of another currency, or none, untouched', () => {
    expect(consumeBalance(money(500, 'zmw'), money(-900, 'usd'))).toMatchObject({ amountDue: { amountMinor: 500 }, startingBalance: { amountMinor: 0 }, endingBalance: { amountMinor: 0 } });
    expect(consumeBalance(money(500, 'zmw'), undefined)).toMatchObject({ amountDue: { amountMinor: 500 } });
  });

  it('never lets manual adjustments make a balance owed, and sums them exactly', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: -50_000, max: 50_000 }).filter((amount) => amount !== 0), { maxLength: 30 }), (amounts) => {
      let balance: ReturnType<typeof adjustedBalance> | null = null;
      let accepted = 0;
      for (const amount of amounts) {
        try {
          balance = adjustedBalance(balance, { amountMinor: amount, currency: 'zmw' });
          accepted += amount;
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
          expect((balance?.amountMinor ?? 0) + amount).toBeGreaterThan(0);
        }
        expect(balance?.amountMinor ?? 0).toBeLessThanOrEqual(0);
      }
      expect(balance?.amountMinor ?? 0).toBe(accepted);
    }));
  });
});
