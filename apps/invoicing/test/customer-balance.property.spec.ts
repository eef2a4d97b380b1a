import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { adjustedBalance, creditToReserve, creditToReturn } from '../src/balances/customer-balance';
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

  it("refunds a final invoice's credit at most once: reserved ≤ credit, held and refundable, and over any settlements the balance gets back the reservation less the last amount refunded", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 1_000_000 }),
      fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 6 }),
      (credit, held, refundable, settlements) => {
        const reserved = creditToReserve(money(-held, 'zmw'), money(credit, 'zmw'), money(refundable, 'zmw'));
        expect(reserved).toBe(Math.min(credit, held, refundable));
        // Each settlement says what was refunded in the end; a later one may only say less (a failure after a partial refund).
        const said = settlements.map((amount) => Math.min(amount, reserved)).sort((a, b) => b - a);
        let returned = 0;
        for (const refunded of said) {
          const back = creditToReturn(reserved, refunded, returned);
          expect(back).toBeGreaterThanOrEqual(0);
          returned += back;
          expect(returned).toBe(reserved - refunded);
        }
        // Balance in = balance out: what the payer got plus what came back is what was reserved, never more.
        expect(said[said.length - 1] + returned).toBe(reserved);
        // A repeat of any earlier settlement gives nothing more.
        for (const refunded of said) expect(creditToReturn(reserved, refunded, returned)).toBe(0);
      },
    ));
  });

  it('reserves nothing from a balance in another currency or none', () => {
    expect(creditToReserve(money(-5_000, 'usd'), money(1_000, 'zmw'), money(1_000, 'zmw'))).toBe(0);
    expect(creditToReserve(null, money(1_000, 'zmw'), money(1_000, 'zmw'))).toBe(0);
  });
});
