import { formatPercentage } from '@recur/money';
import type { TaxAmount, TaxRate } from '../gen/recur/invoicing/v1/tax_rate_pb';
import { moneyFromMessage } from '../money';

/** The public JSON of a tax rate: what `/v1/tax-rates` answers (docs/api/tax-rates.md). */
export interface TaxRateJson {
  id: string;
  object: 'tax_rate';
  livemode: boolean;
  display_name: string;
  description: string | null;
  /** Up to four decimals, exact: 16, 7.5, 18.0001. */
  percentage: number;
  inclusive: boolean;
  country: string | null;
  region: string | null;
  active: boolean;
  account_default: boolean;
  metadata: Record<string, string>;
  created: number;
  updated: number;
}

/** A tax amount on a line or, summed by rate, on the invoice. */
export interface TaxAmountJson {
  tax_rate: string;
  display_name: string;
  percentage: number;
  inclusive: boolean;
  taxable_amount: number;
  amount: number;
}

// A number printed from the exact decimal text: JSON carries it as written, never a float's approximation.
const percentage = (ratePpm: bigint): number => Number(formatPercentage(Number(ratePpm)));

export function presentTaxRate(rate: TaxRate): TaxRateJson {
  return {
    id: rate.id,
    object: 'tax_rate',
    livemode: rate.livemode,
    display_name: rate.displayName,
    description: rate.description ?? null,
    percentage: percentage(rate.ratePpm),
    inclusive: rate.inclusive,
    country: rate.country || null,
    region: rate.region || null,
    active: rate.active,
    account_default: rate.accountDefault,
    metadata: { ...rate.metadata },
    created: Number(rate.created),
    updated: Number(rate.updated),
  };
}

export function presentTaxAmount(tax: TaxAmount): TaxAmountJson {
  return {
    tax_rate: tax.taxRateId,
    display_name: tax.displayName,
    percentage: percentage(tax.ratePpm),
    inclusive: tax.inclusive,
    taxable_amount: moneyFromMessage(tax.taxableAmount, 'taxable_amount').amountMinor,
    amount: moneyFromMessage(tax.amount, 'amount').amountMinor,
  };
}
