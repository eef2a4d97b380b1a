import { create } from '@bufbuild/protobuf';
import { taxRateV1, toMoneyMessage } from '@recur/contracts';
import { type Metadata, unixSeconds } from '@recur/kernel';
import { money, type TaxAmount } from '@recur/money';
import type { Prisma, TaxRate as TaxRateRow } from '../generated/prisma/client';
import type { TaxRate } from './tax-rate';

export function fromTaxRateRow(row: TaxRateRow): TaxRate {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    displayName: row.displayName,
    description: row.description,
    ratePpm: row.ratePpm,
    inclusive: row.inclusive,
    country: row.country,
    region: row.region,
    active: row.active,
    accountDefault: row.accountDefault,
    metadata: row.metadata as Metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toTaxRateRow(rate: TaxRate): Prisma.TaxRateUncheckedCreateInput {
  return {
    id: rate.id,
    accountId: rate.tenant.accountId,
    livemode: rate.tenant.livemode,
    displayName: rate.displayName,
    description: rate.description,
    ratePpm: rate.ratePpm,
    inclusive: rate.inclusive,
    country: rate.country,
    region: rate.region,
    active: rate.active,
    accountDefault: rate.accountDefault,
    metadata: rate.metadata,
    createdAt: rate.createdAt,
    updatedAt: rate.updatedAt,
  };
}

export function toTaxRateMessage(rate: TaxRate): taxRateV1.TaxRate {
  return create(taxRateV1.TaxRateSchema, {
    id: rate.id,
    livemode: rate.tenant.livemode,
    displayName: rate.displayName,
    description: rate.description ?? undefined,
    ratePpm: BigInt(rate.ratePpm),
    inclusive: rate.inclusive,
    country: rate.country ?? '',
    region: rate.region ?? '',
    active: rate.active,
    accountDefault: rate.accountDefault,
    metadata: rate.metadata,
    created: BigInt(unixSeconds(rate.createdAt)),
    updated: BigInt(unixSeconds(rate.updatedAt)),
  });
}

/** A tax amount as an invoice row keeps it (JSON): the rate's terms when applied, and the amounts. */
export interface TaxAmountRow {
  tax_rate_id: string;
  display_name: string;
  rate_ppm: number;
  inclusive: boolean;
  taxable_amount: number;
  amount: number;
}

export const toTaxAmountRow = (tax: TaxAmount): TaxAmountRow => ({
  tax_rate_id: tax.taxRate.id,
  display_name: tax.taxRate.displayName,
  rate_ppm: tax.taxRate.ratePpm,
  inclusive: tax.taxRate.inclusive,
  taxable_amount: tax.taxableAmount.amountMinor,
  amount: tax.amount.amountMinor,
});

export const fromTaxAmountRow = (row: TaxAmountRow, currency: string): TaxAmount => ({
  taxRate: { id: row.tax_rate_id, displayName: row.display_name, ratePpm: row.rate_ppm, inclusive: row.inclusive },
  taxableAmount: money(row.taxable_amount, currency),
  amount: money(row.amount, currency),
});

export const toTaxAmountMessage = (tax: TaxAmount): taxRateV1.TaxAmount =>
  create(taxRateV1.TaxAmountSchema, {
    taxRateId: tax.taxRate.id,
    displayName: tax.taxRate.displayName,
    ratePpm: BigInt(tax.taxRate.ratePpm),
    inclusive: tax.taxRate.inclusive,
    taxableAmount: toMoneyMessage(tax.taxableAmount),
    amount: toMoneyMessage(tax.amount),
  });
