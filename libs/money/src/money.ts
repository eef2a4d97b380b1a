import { DomainError, invalidArgument } from '@recur/kernel';
import { checkCurrencyCode, currencyExponent } from './currency';

/**
 * An amount of one currency: an integer number of the currency's minor units (cents for
 * usd, yen for jpy, fils for kwd) and its lowercase ISO 4217 code.
 *
 * Representation: a JavaScript `number`. Stored and accepted amounts are bounded by
 * AMOUNT_MAX (10^12 − 1) and computed ones (a yearly price × a quantity) by
 * Number.MAX_SAFE_INTEGER, so every amount is an exact integer. bigint appears only at the
 * two 64-bit edges — int64 fields of gRPC messages (protobuf-es generates bigint) and BIGINT
 * columns (Prisma answers bigint) — and crosses them through fromInt64/toInt64 alone.
 */
export interface Money {
  readonly amountMinor: number;
  readonly currency: string;
}

/** The largest amount an integrator may give or the catalog stores (9 999 999 999.99 in a two-decimal currency). */
export const AMOUNT_MAX = 999_999_999_999;

/** Two amounts of different currencies met in one operation. */
export class CurrencyMismatchError extends DomainError {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super('failed_precondition', 'currency_mismatch', `Amounts in ${expected} and ${actual} cannot be combined.`);
    this.name = 'CurrencyMismatchError';
  }
}

function exact(amountMinor: number): number {
  if (!Number.isSafeInteger(amountMinor)) {
    throw new DomainError('invalid_argument', 'amount_too_large', 'The computed amount exceeds the largest supported amount.', 'amount');
  }
  return amountMinor;
}

/** An amount of `currency`; `amountMinor` must be an integer (minor units), `currency` a known ISO 4217 code. */
export function money(amountMinor: number, currency: string): Money {
  if (!Number.isInteger(amountMinor)) throw invalidArgument('amount', 'an amount must be an integer number of minor units');
  return Object.freeze({ amountMinor: exact(amountMinor), currency: checkCurrencyCode(currency) });
}

export const zero = (currency: string): Money => money(0, currency);

/** Throws CurrencyMismatchError unless `b` is in `a`'s currency. */
export function assertSameCurrency(a: Money, b: Money): void {
  if (a.currency !== b.currency) throw new CurrencyMismatchError(a.currency, b.currency);
}

export function add(a: Money, b: Money): Money {
  assertSameCurrency(a, b);
  return money(exact(a.amountMinor + b.amountMinor), a.currency);
}

export function subtract(a: Money, b: Money): Money {
  assertSameCurrency(a, b);
  return money(exact(a.amountMinor - b.amountMinor), a.currency);
}

/** The amount times an integer factor (a quantity, a number of months). */
export function multiply(a: Money, factor: number): Money {
  if (!Number.isInteger(factor)) throw invalidArgument('factor', 'money is multiplied by integers only; use percentOf for fractions');
  return money(exact(a.amountMinor * factor), a.currency);
}

/** The sum of `amounts`, all in `currency`; 0 of it when empty. */
export function sum(currency: string, amounts: readonly Money[]): Money {
  return amounts.reduce(add, zero(currency));
}

export function compare(a: Money, b: Money): -1 | 0 | 1 {
  assertSameCurrency(a, b);
  return a.amountMinor === b.amountMinor ? 0 : a.amountMinor < b.amountMinor ? -1 : 1;
}

export const min = (a: Money, b: Money): Money => (compare(a, b) <= 0 ? a : b);

export function equals(a: Money, b: Money): boolean {
  return a.currency === b.currency && a.amountMinor === b.amountMinor;
}

/**
 * The one rounding rule: `numerator / denominator` rounded half up to an integer
 * (12.5 → 13, 12.49 → 12; halves of negative values round away from zero, −12.5 → −13).
 * Computed in bigint, so products beyond 2^53 (a large subtotal × basis points) stay exact.
 */
export function roundHalfUp(numerator: number | bigint, denominator: number | bigint): number {
  const n = BigInt(numerator);
  const d = BigInt(denominator);
  if (d <= 0n) throw invalidArgument('denominator', 'the denominator must be a positive integer');
  const magnitude = (2n * (n < 0n ? -n : n) + d) / (2n * d);
  return exact(Number(n < 0n ? -magnitude : magnitude));
}

/**
 * `percent` % of an amount, rounded half up to the minor unit. Percentages carry at most
 * two decimals (basis points): 12.5 % of 1 001 is 125.125 → 125; 50 % of 25 is 12.5 → 13.
 */
export function percentOf(a: Money, percent: number): Money {
  if (!Number.isFinite(percent) || percent < 0) throw invalidArgument('percent', 'a percentage must be a non-negative number');
  const basisPoints = Math.round(percent * 100);
  return money(roundHalfUp(BigInt(a.amountMinor) * BigInt(basisPoints), 10_000), a.currency);
}

/** The exact decimal in major units, as a string: 2900 usd → "29.00", 500 jpy → "500", −5 kwd → "-0.005". */
export function toDecimalString(a: Money): Intl.StringNumericLiteral {
  const exponent = currencyExponent(a.currency);
  const digits = Math.abs(a.amountMinor).toString().padStart(exponent + 1, '0');
  const sign = a.amountMinor < 0 ? '-' : '';
  const decimal = exponent === 0 ? sign + digits : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return decimal as Intl.StringNumericLiteral;
}

/** For people (PDFs, pages): the locale's currency format with exactly the currency's digits, e.g. "$29.00", "￥500". */
export function formatMoney(a: Money, locale = 'en-US'): string {
  const exponent = currencyExponent(a.currency);
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: a.currency, // Intl reads currency codes case-insensitively
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  });
  // A decimal string is formatted exactly (Intl.NumberFormat v3), with no float in between.
  return format.format(toDecimalString(a));
}

/**
 * The one conversion between a 64-bit integer — an int64 field of a gRPC message, a BIGINT
 * column (Prisma answers bigint) — and the number every other layer uses, for amounts and
 * quantities alike. A value a number cannot hold exactly is refused as an invalid `param`,
 * never rounded.
 */
export function fromInt64(value: bigint, param?: string): number;
export function fromInt64(value: bigint | undefined, param?: string): number | undefined;
export function fromInt64(value: bigint | undefined, param = 'amount'): number | undefined {
  return value === undefined ? undefined : exactInteger(Number(value), value, param);
}

export function toInt64(value: number, param?: string): bigint;
export function toInt64(value: number | undefined, param?: string): bigint | undefined;
export function toInt64(value: number | undefined, param = 'amount'): bigint | undefined {
  return value === undefined ? undefined : BigInt(exactInteger(value, value, param));
}

function exactInteger(value: number, original: bigint | number, param: string): number {
  if (!Number.isSafeInteger(value)) throw invalidArgument(param, `${param} must be an integer of at most ${Number.MAX_SAFE_INTEGER} in magnitude; ${original} is not`);
  return value;
}
