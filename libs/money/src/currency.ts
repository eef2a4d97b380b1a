import { data as iso4217, publishDate } from 'currency-codes';
import { invalidArgument } from '@recur/kernel';

/**
 * The currencies Recur bills in and their exponents (minor-unit digits: usd 2, jpy 0,
 * kwd 3, clf 4), from ISO 4217 list one as shipped by the `currency-codes` package
 * (published date in ISO_4217_PUBLISHED). Codes are lowercase, as the API writes them.
 *
 * ISO gives no minor unit ("N.A.") for precious metals, bond-market units, the SDR and
 * the testing/no-currency codes; `currency-codes` records those as 0 digits, so they are
 * named here and refused: nobody is invoiced in troy ounces of gold.
 */
export const ISO_4217_PUBLISHED: string = publishDate;

const NO_MINOR_UNIT = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  iso4217.filter((record) => !NO_MINOR_UNIT.has(record.code)).map((record) => [record.code.toLowerCase(), record.digits]),
);

/** Every currency code Recur accepts, lowercase, sorted. */
export const CURRENCY_CODES: readonly string[] = [...EXPONENTS.keys()].sort();

export const isCurrencyCode = (code: string): boolean => EXPONENTS.has(code);

/** The currency's minor-unit digits; an unknown code is an invalid argument named `param`. */
export function currencyExponent(code: string, param = 'currency'): number {
  const exponent = EXPONENTS.get(code);
  if (exponent === undefined) throw invalidArgument(param, `${param} must be a lowercase ISO 4217 currency code such as usd; '${code}' is not one`);
  return exponent;
}

/** Checks a currency code and answers it (lowercase ISO 4217, as the API writes it). */
export function checkCurrencyCode(code: string, param = 'currency'): string {
  currencyExponent(code, param);
  return code;
}
