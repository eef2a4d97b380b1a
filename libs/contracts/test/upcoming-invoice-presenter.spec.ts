import { create } from '@bufbuild/protobuf';
import { UpcomingInvoiceSchema } from '../src/gen/recur/subscription/v1/subscription_pb';
import { presentUpcomingInvoice } from '../src';

/**
 * The upcoming-invoice preview's balance figures (docs/api/customer-balance.md#invoices-consume-credit)
 * from a subscription service that sends them, and from an older one that does not: that preview
 * shows no credit and the whole total due, never `amount_due: 0` for an invoice that will ask for money.
 */
const PREVIEW = { subscriptionId: 'sub_1', customerId: 'cus_1', currency: 'zmw', billingReason: 'subscription_cycle', periodStart: 1n, periodEnd: 2n, subtotal: 10_000n, total: 11_600n, tax: 1_600n, totalExcludingTax: 10_000n, customerTaxExempt: 'none' };

describe('upcoming invoice presenter', () => {
  it('shows the balance the invoice will consume', () => {
    expect(presentUpcomingInvoice(create(UpcomingInvoiceSchema, { ...PREVIEW, startingBalance: -5_000n, endingBalance: 0n, amountDue: 6_600n })))
      .toMatchObject({ total: 11_600, starting_balance: -5_000, ending_balance: 0, amount_due: 6_600 });
    // A covered invoice is due 0: the field is present and 0, not absent.
    expect(presentUpcomingInvoice(create(UpcomingInvoiceSchema, { ...PREVIEW, startingBalance: -20_000n, endingBalance: -8_400n, amountDue: 0n })))
      .toMatchObject({ starting_balance: -20_000, ending_balance: -8_400, amount_due: 0 });
  });

  it('from a subscription service without balance previews: no credit, the total due', () => {
    expect(presentUpcomingInvoice(create(UpcomingInvoiceSchema, PREVIEW))).toMatchObject({ total: 11_600, starting_balance: 0, ending_balance: 0, amount_due: 11_600 });
  });
});
