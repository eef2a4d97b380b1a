import fc from 'fast-check';
import { DomainError } from '@recur/kernel';
import { money, taxInvoice, type TaxRateTerms } from '@recur/money';
import { creditedBalance } from '../src/balances/customer-balance';
import { creditInvoice, refundInvoice } from '../src/credit-notes/credit-note';
import { consumeBalance, type Invoice } from '../src/invoices/invoice';

/**
 * Credit notes that move no money beside refunds' (docs/api/credit-notes.md): over random taxed
 * invoices and random sequences of refunds and credits, refunds + credits never exceed the
 * total, refunds never exceed what was paid, the tax given back never exceeds the invoice's, and
 * the credit a paid invoice puts on the balance is exactly what later invoices can take from it.
 */
const rate = (id: string, ratePpm: number, inclusive: boolean): TaxRateTerms => ({ id, displayName: 'VAT', ratePpm, inclusive }) as TaxRateTerms;
const RATES = [rate('txr_16', 160_000, false), rate('txr_18', 180_000, true)];
const zmw = (amount: number) => money(amount, 'zmw');
const NOW = new Date('2026-12-01T00:00:00Z');

const taxedTotals = fc.array(fc.record({ amount: fc.integer({ min: 1, max: 2_000_000 }), rate: fc.integer({ min: -1, max: RATES.length - 1 }) }), { minLength: 1, maxLength: 4 })
  .map((lines) => taxInvoice('zmw', lines.map((line) => ({ amount: zmw(line.amount), taxRate: line.rate < 0 ? null : RATES[line.rate] })), zmw(0)))
  .filter((taxed) => taxed.total.amountMinor > 0);

/** A finalized invoice of these totals: `paid` (the whole total paid), or `open` owing all of it. */
const invoiceOf = (taxed: { total: ReturnType<typeof zmw>; tax: ReturnType<typeof zmw>; totalTaxAmounts: Invoice['totalTaxAmounts'] }, paid: boolean): Invoice => ({
  id: 'in_1', tenant: { accountId: 'acct_1', livemode: false }, number: 'INV-000001', status: paid ? 'paid' : 'open',
  customer: { id: 'cus_1', name: 'Ada', email: 'ada@example.com' }, subscriptionId: null, billingReason: 'manual', collectionMethod: 'send_invoice', currency: 'zmw',
  description: null, lines: [], subtotal: taxed.total, discount: zmw(0), tax: taxed.tax, totalTaxAmounts: taxed.totalTaxAmounts, customerTaxExempt: 'none', total: taxed.total,
  amountDue: paid ? zmw(0) : taxed.total, amountPaid: paid ? taxed.total : zmw(0), amountRefunded: zmw(0), amountCredited: zmw(0), startingBalance: zmw(0), endingBalance: zmw(0), customerDetails: null, creditRefundInvoiceId: null,
  dueDate: '2026-12-10', periodStart: null, periodEnd: null, paymentUrl: null, paymentToken: null, metadata: {},
  createdAt: NOW, updatedAt: NOW, finalizedAt: NOW, paidAt: paid ? NOW : null, voidedAt: null, paymentAttemptCount: 0, paymentRetryAt: [],
});

/** One step: a refund (of a paid invoice) or a credit, of a share of the total in ‰ (over 1000: more than there is), or of all that is left. */
const steps = fc.array(fc.record({ kind: fc.constantFrom('refund', 'credit'), permille: fc.option(fc.integer({ min: 1, max: 1_200 }), { nil: undefined }) }), { maxLength: 8 });

describe('credit notes and refunds on one invoice', () => {
  it('never give back more than the total (refunds never more than was paid), and carry back at most the invoice\'s tax', () => {
    fc.assert(fc.property(taxedTotals, fc.boolean(), steps, (taxed, paid, plan) => {
      let invoice = invoiceOf(taxed, paid);
      const total = invoice.total.amountMinor;
      let given = 0;
      let taxGiven = 0;
      for (const [index, step] of plan.entries()) {
        const asked = step.permille === undefined ? undefined : Math.max(1, Math.floor((total * step.permille) / 1000));
        try {
          const change = step.kind === 'refund'
            ? refundInvoice(invoice, { creditNoteId: `cn_${index}`, paymentId: 'pay_1', amount: zmw(asked ?? invoice.amountPaid.amountMinor - invoice.amountRefunded.amountMinor), reason: 'duplicate' }, `CN-${index}`, NOW)
            : creditInvoice(invoice, { creditNoteId: `cn_${index}`, amount: asked === undefined ? undefined : BigInt(asked), reason: 'order_change', memo: '', metadata: {}, refundsUnderWay: null }, `CN-${index}`, NOW);
          expect(change.creditNote.amount.amountMinor).toBeGreaterThan(0);
          given += change.creditNote.amount.amountMinor;
          taxGiven += change.creditNote.taxAmounts.reduce((sum, tax) => sum + tax.amount.amountMinor, 0);
          invoice = change.invoice;
        } catch (error) {
          // A refusal is a domain answer (409/400), never a crash, and changes nothing.
          expect(error).toBeInstanceOf(DomainError);
        }
        expect(given).toBeLessThanOrEqual(total);
        expect(invoice.amountRefunded.amountMinor + invoice.amountCredited.amountMinor).toBe(given);
        expect(invoice.amountRefunded.amountMinor).toBeLessThanOrEqual(invoice.amountPaid.amountMinor);
        expect(invoice.amountDue.amountMinor).toBeGreaterThanOrEqual(0);
        expect(Math.abs(taxGiven)).toBeLessThanOrEqual(Math.abs(invoice.tax.amountMinor));
      }
      // An open invoice's credits plus what it still owes are its total; all credited → paid with nothing collected.
      if (!paid) {
        expect(invoice.amountDue.amountMinor + invoice.amountCredited.amountMinor).toBe(total);
        expect(invoice.status).toBe(invoice.amountDue.amountMinor === 0 ? 'paid' : 'open');
      }
    }));
  });

  it('counts refunds still in flight at the provider: a credit never takes what they will give back', () => {
    fc.assert(fc.property(taxedTotals, fc.integer({ min: 0, max: 1000 }), (taxed, permille) => {
      const invoice = invoiceOf(taxed, true);
      const inFlight = Math.floor((invoice.total.amountMinor * permille) / 1000);
      const left = invoice.total.amountMinor - inFlight;
      const credit = () => creditInvoice(invoice, { creditNoteId: 'cn_1', amount: undefined, reason: 'duplicate', memo: '', metadata: {}, refundsUnderWay: zmw(inFlight) }, 'CN-1', NOW);
      if (left === 0) expect(() => credit()).toThrow(expect.objectContaining({ code: 'nothing_to_credit' }));
      else expect(credit().creditNote.amount.amountMinor).toBe(left);
    }));
  });

  it('credits a paid invoice to the balance, which later invoices consume exactly: balance in = balance out', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 500_000 }), { minLength: 1, maxLength: 6 }), fc.array(fc.integer({ min: 0, max: 400_000 }), { maxLength: 10 }), (credits, nextTotals) => {
      let balance: ReturnType<typeof zmw> | null = null;
      for (const credit of credits) balance = creditedBalance(balance, zmw(credit));
      const creditedIn = credits.reduce((a, b) => a + b, 0);
      expect(balance!.amountMinor).toBe(-creditedIn);
      let consumed = 0;
      for (const total of nextTotals) {
        const after = consumeBalance(zmw(total), balance!);
        consumed += after.endingBalance.amountMinor - after.startingBalance.amountMinor;
        if (after.endingBalance.amountMinor !== after.startingBalance.amountMinor) balance = after.endingBalance;
      }
      expect(consumed + -balance!.amountMinor).toBe(creditedIn);
    }));
  });

  it('refuses a credit to a balance held in another currency, leaving it as it was', () => {
    expect(() => creditedBalance(money(-500, 'usd'), zmw(100))).toThrow(expect.objectContaining({ code: 'balance_currency_mismatch' }));
    expect(creditedBalance(money(0, 'usd'), zmw(100))).toEqual(zmw(-100));
  });
});
