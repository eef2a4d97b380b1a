import { isDomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { type Refund, refundAmount } from '../src/refunds/refund';

/** What a new refund of an invoice may give back, beside the refunds it already has (refundAmount). */
const zmw = (amount: number) => money(amount, 'zmw');
const invoice = { id: 'in_1', status: 'paid', billingReason: 'manual', amountRefunded: zmw(0) };
const earlier = (...amounts: number[]) => amounts.map((amount) => ({ amount: zmw(amount) }) as Refund);
const failure = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    if (isDomainError(error)) return { kind: error.kind, code: error.code, param: error.param };
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('refundAmount', () => {
  it('is what is asked, or all that is left after the refunds that are not failed', () => {
    expect(refundAmount(invoice, zmw(7_500), [], 2_000n)).toEqual(zmw(2_000));
    expect(refundAmount(invoice, zmw(7_500), earlier(2_000, 500), undefined)).toEqual(zmw(5_000));
    expect(refundAmount(invoice, zmw(7_500), earlier(2_000, 500), 5_000n)).toEqual(zmw(5_000));
  });

  it('refuses more than is left (amount_too_large), nothing or less (parameter_invalid), and any refund once all of it is given back (invoice_refunded)', () => {
    expect(failure(() => refundAmount(invoice, zmw(7_500), earlier(2_000), 5_501n))).toEqual({ kind: 'invalid_argument', code: 'amount_too_large', param: 'amount' });
    expect(failure(() => refundAmount(invoice, zmw(7_500), [], 0n))).toEqual({ kind: 'invalid_argument', code: 'parameter_invalid', param: 'amount' });
    expect(failure(() => refundAmount(invoice, zmw(7_500), [], -1n))).toEqual({ kind: 'invalid_argument', code: 'parameter_invalid', param: 'amount' });
    expect(failure(() => refundAmount(invoice, zmw(7_500), earlier(7_000, 500), undefined))).toEqual({ kind: 'failed_precondition', code: 'invoice_refunded', param: undefined });
  });

  it('asks an invoicing release that records only full refunds (no amount_refunded) for nothing but a full refund; a partial one is refused until its upgrade (409)', () => {
    const fromOldRelease = { id: 'in_1', status: 'paid', billingReason: 'manual' };
    expect(refundAmount(fromOldRelease, zmw(7_500), [], undefined)).toEqual(zmw(7_500));
    expect(refundAmount(fromOldRelease, zmw(7_500), [], 7_500n)).toEqual(zmw(7_500));
    expect(failure(() => refundAmount(fromOldRelease, zmw(7_500), [], 2_000n))).toEqual({ kind: 'failed_precondition', code: 'partial_refund_unavailable', param: undefined });
  });
});
