import { checkMetadata, invalidArgument, mergeMetadata, type Metadata, newId, type TenantRef } from '@recur/kernel';
import { RATE_PPM_MAX, type TaxRateTerms } from '@recur/money';
import { isCountryCode, TAX_EXEMPT_STATUSES, TAX_RATE_DISPLAY_NAME_MAX, TAX_REGION_MAX, type TaxExemptStatus } from '@recur/vocabulary';

/** A tax rate (docs/api/tax-rates.md). `ratePpm` and `inclusive` are fixed at creation. */
export interface TaxRate {
  id: string;
  tenant: TenantRef;
  displayName: string;
  description: string | null;
  ratePpm: number;
  inclusive: boolean;
  country: string | null;
  region: string | null;
  active: boolean;
  accountDefault: boolean;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTaxRateFields {
  displayName: string;
  description?: string;
  ratePpm: number;
  inclusive: boolean;
  country?: string;
  region?: string;
  accountDefault?: boolean;
  metadata?: Metadata;
}

export interface TaxRateChanges {
  displayName?: string;
  description?: string;
  country?: string;
  region?: string;
  active?: boolean;
  accountDefault?: boolean;
  metadata?: Metadata;
}

function checkDisplayName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > TAX_RATE_DISPLAY_NAME_MAX) throw invalidArgument('display_name', `display_name must be 1 to ${TAX_RATE_DISPLAY_NAME_MAX} characters`);
  return trimmed;
}

/** An ISO 3166-1 alpha-2 code, upper case; empty or absent → none. */
export function checkCountry(country: string | undefined | null, param = 'country'): string | null {
  if (country === undefined || country === null || country === '') return null;
  if (!isCountryCode(country)) throw invalidArgument(param, `${param} must be an ISO 3166-1 alpha-2 country code in upper case, such as ZM or SN`);
  return country;
}

function checkRegion(region: string | undefined | null, country: string | null): string | null {
  const trimmed = region?.trim() ?? '';
  if (trimmed === '') return null;
  if (trimmed.length > TAX_REGION_MAX) throw invalidArgument('region', `region must be at most ${TAX_REGION_MAX} characters`);
  if (country === null) throw invalidArgument('region', 'region needs a country');
  return trimmed;
}

const checkDescription = (text: string | undefined | null): string | null => {
  if (text === undefined || text === null || text.trim() === '') return null;
  if (text.length > 500) throw invalidArgument('description', 'description must be at most 500 characters');
  return text;
};

export function createTaxRate(tenant: TenantRef, fields: NewTaxRateFields, now: Date): TaxRate {
  if (!Number.isInteger(fields.ratePpm) || fields.ratePpm < 0 || fields.ratePpm > RATE_PPM_MAX) {
    throw invalidArgument('percentage', 'percentage must be a number from 0 to 100 with at most four decimals');
  }
  const country = checkCountry(fields.country);
  return {
    id: newId('txr'),
    tenant,
    displayName: checkDisplayName(fields.displayName),
    description: checkDescription(fields.description),
    ratePpm: fields.ratePpm,
    inclusive: fields.inclusive,
    country,
    region: checkRegion(fields.region, country),
    active: true,
    accountDefault: fields.accountDefault ?? false,
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
  };
}

/** Everything but the percentage and inclusive may change; an archived rate is no account default. */
export function updateTaxRate(rate: TaxRate, changes: TaxRateChanges, now: Date): TaxRate {
  const country = changes.country === undefined ? rate.country : checkCountry(changes.country);
  const region = changes.region !== undefined ? changes.region : changes.country !== undefined && country === null ? null : rate.region;
  const active = changes.active ?? rate.active;
  return {
    ...rate,
    displayName: changes.displayName === undefined ? rate.displayName : checkDisplayName(changes.displayName),
    description: changes.description === undefined ? rate.description : checkDescription(changes.description),
    country,
    region: checkRegion(region, country),
    active,
    accountDefault: active && (changes.accountDefault ?? rate.accountDefault),
    metadata: changes.metadata === undefined ? rate.metadata : checkMetadata(mergeMetadata(rate.metadata, changes.metadata)),
    updatedAt: now,
  };
}

export const termsOf = (rate: TaxRate): TaxRateTerms => ({ id: rate.id, displayName: rate.displayName, ratePpm: rate.ratePpm, inclusive: rate.inclusive });

/** What the rules need to know of the billed customer. */
export interface TaxCustomer {
  country: string | null;
  region: string | null;
  taxExempt: TaxExemptStatus;
}

export const checkTaxExempt = (value: string | undefined): TaxExemptStatus => {
  if (value === undefined || value === '') return 'none';
  if (!(TAX_EXEMPT_STATUSES as readonly string[]).includes(value)) throw invalidArgument('tax_exempt', `tax_exempt must be one of ${TAX_EXEMPT_STATUSES.join(', ')}`);
  return value as TaxExemptStatus;
};

/** Why a line got its rate (or none). */
export type TaxRule = 'exempt' | 'reverse' | 'line' | 'country' | 'account_default' | 'none';

/**
 * The rule that picks each line's rate (docs/api/tax-rates.md#which-rate-applies), first match wins:
 * 1. the customer is `exempt` or `reverse` → no tax;
 * 2. the line's own rate (a one-off line's `tax_rates`, or its plan's or add-on's), archived or not;
 * 3. an active rate of the customer's country: one of the same region first, then one with no
 *    region; among several, the oldest (archive the others to change it);
 * 4. the app's active account default;
 * 5. no tax.
 * `rates` holds the line's named rates and the app's active ones.
 */
export function chooseTaxRate(lineRateIds: readonly string[], customer: TaxCustomer, rates: readonly TaxRate[], param = 'tax_rates'): { rate: TaxRate | null; rule: TaxRule } {
  if (customer.taxExempt !== 'none') return { rate: null, rule: customer.taxExempt };
  if (lineRateIds.length > 0) {
    const named = rates.find((rate) => rate.id === lineRateIds[0]);
    if (named === undefined) throw invalidArgument(param, `No such tax rate: '${lineRateIds[0]}'`, 'resource_missing');
    return { rate: named, rule: 'line' };
  }
  const oldestFirst = [...rates].filter((rate) => rate.active).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  if (customer.country !== null) {
    const inCountry = oldestFirst.filter((rate) => rate.country === customer.country);
    const regional = customer.region === null ? undefined : inCountry.find((rate) => rate.region !== null && rate.region.toLowerCase() === customer.region!.toLowerCase());
    const national = inCountry.find((rate) => rate.region === null);
    if (regional ?? national) return { rate: (regional ?? national)!, rule: 'country' };
  }
  const fallback = oldestFirst.find((rate) => rate.accountDefault);
  return fallback ? { rate: fallback, rule: 'account_default' } : { rate: null, rule: 'none' };
}


/** Each line's rate by the rules, as an invoice applies it; an untaxed customer (no tax data) gets none. */
export function chooseLineRates(lineRateIds: readonly (readonly string[])[], customer: TaxCustomer | undefined, rates: readonly TaxRate[]): { customerTaxExempt: TaxExemptStatus; lineRates: (TaxRateTerms | null)[] } {
  const buyer = customer ?? { country: null, region: null, taxExempt: 'none' as const };
  return {
    customerTaxExempt: buyer.taxExempt,
    lineRates: lineRateIds.map((ids, index) => {
      const { rate } = chooseTaxRate(ids, buyer, rates, `lines[${index}].tax_rates`);
      return rate === null ? null : termsOf(rate);
    }),
  };
}
