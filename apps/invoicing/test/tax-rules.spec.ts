import { DomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { thrownBy } from '@recur/testing';
import { createOneOffInvoice } from '../src/invoices/invoice';
import { chooseLineRates, chooseTaxRate, createTaxRate, type TaxCustomer, type TaxRate, updateTaxRate } from '../src/tax-rates/tax-rate';

const tenant = { accountId: 'acct_1', livemode: false };
let clock = 0;
const rate = (fields: Partial<Parameters<typeof createTaxRate>[1]> & { active?: boolean }): TaxRate => {
  const created = createTaxRate(tenant, { displayName: 'VAT', ratePpm: 160_000, inclusive: false, ...fields }, new Date(++clock * 1000));
  return fields.active === false ? updateTaxRate(created, { active: false }, created.createdAt) : created;
};
const buyer = (fields: Partial<TaxCustomer> = {}): TaxCustomer => ({ country: 'ZM', region: null, taxExempt: 'none', ...fields });

describe('the rule choosing a line\'s rate (docs/api/tax-rates.md#which-rate-applies)', () => {
  const zambia = rate({ country: 'ZM' });
  const lusaka = rate({ country: 'ZM', region: 'Lusaka', ratePpm: 170_000 });
  const zambiaLater = rate({ country: 'ZM', ratePpm: 10_000 });
  const fallback = rate({ displayName: 'Default', ratePpm: 50_000, accountDefault: true });
  const archivedOwn = rate({ displayName: 'Reduced', ratePpm: 50_000, active: false });
  const archivedKenya = rate({ country: 'KE', active: false });
  const all = [zambia, lusaka, zambiaLater, fallback, archivedOwn, archivedKenya];

  it('takes, in order: exempt or reverse, the line\'s own, the country (region first, oldest first), the account default, none', () => {
    expect(chooseTaxRate([archivedOwn.id], buyer({ taxExempt: 'exempt' }), all)).toEqual({ rate: null, rule: 'exempt' });
    expect(chooseTaxRate([archivedOwn.id], buyer({ taxExempt: 'reverse' }), all)).toEqual({ rate: null, rule: 'reverse' });
    expect(chooseTaxRate([archivedOwn.id], buyer(), all)).toEqual({ rate: archivedOwn, rule: 'line' });
    expect(chooseTaxRate([], buyer({ region: 'lusaka' }), all)).toEqual({ rate: lusaka, rule: 'country' });
    expect(chooseTaxRate([], buyer({ region: 'Copperbelt' }), all)).toEqual({ rate: zambia, rule: 'country' });
    expect(chooseTaxRate([], buyer(), [zambiaLater, zambia])).toEqual({ rate: zambia, rule: 'country' });
    // An archived country rate is not chosen: the default is.
    expect(chooseTaxRate([], buyer({ country: 'KE' }), all)).toEqual({ rate: fallback, rule: 'account_default' });
    expect(chooseTaxRate([], buyer({ country: null }), all)).toEqual({ rate: fallback, rule: 'account_default' });
    expect(chooseTaxRate([], buyer({ country: 'SN' }), [zambia])).toEqual({ rate: null, rule: 'none' });
  });

  it('refuses a line naming an unknown rate, by the line', () => {
    expect(thrownBy(() => chooseLineRates([[], ['txr_nope']], buyer(), all))).toMatchObject({ code: 'resource_missing', param: 'lines[1].tax_rates' });
  });

  it('keeps percentage and inclusive; archiving clears the account default', () => {
    const archived = updateTaxRate(fallback, { active: false, displayName: 'Old' }, new Date());
    expect([archived.ratePpm, archived.inclusive, archived.active, archived.accountDefault, archived.displayName]).toEqual([50_000, false, false, false, 'Old']);
    expect(thrownBy(() => rate({ country: 'zm' }))).toMatchObject({ param: 'country' });
    expect(thrownBy(() => rate({ region: 'Lusaka' }))).toMatchObject({ param: 'region' });
    expect(thrownBy(() => rate({ ratePpm: 1_000_001 }))).toBeInstanceOf(DomainError);
  });

  it('an invoice raised with the chosen rates: 16 % exclusive in ZMW, totals to the minor unit', () => {
    const taxing = chooseLineRates([[], []], buyer(), all);
    const { invoice } = createOneOffInvoice(tenant, { id: 'cus_1', name: 'Mwila', email: 'm@example.com' }, {
      currency: 'zmw', lines: [{ description: 'Installation', amount: 12_345 }, { description: 'Cable', amount: 2_500 }],
    }, new Date(), taxing);
    expect(invoice.lines.map((line) => line.taxAmounts.map((tax) => [tax.taxRate.id, tax.amount.amountMinor]))).toEqual([[[zambia.id, 1_975]], [[zambia.id, 400]]]);
    expect([invoice.subtotal, invoice.tax, invoice.total, invoice.amountDue]).toEqual([money(14_845, 'zmw'), money(2_375, 'zmw'), money(17_220, 'zmw'), money(17_220, 'zmw')]);
    expect(invoice.customerTaxExempt).toBe('none');
  });
});
