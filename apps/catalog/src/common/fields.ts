import { AMOUNT_MAX, CATALOG_DESCRIPTION_MAX, CATALOG_NAME_MAX, DEFAULT_CURRENCY } from '@recur/vocabulary';
import { invalidArgument } from '@recur/kernel';
import { checkCurrencyCode } from '@recur/money';

/** Field rules shared by every catalog resource. Pure: no Nest, Prisma or gRPC. */
export function checkName(name: string, param = 'name'): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw invalidArgument(param, `${param} must not be empty`);
  if (trimmed.length > CATALOG_NAME_MAX) throw invalidArgument(param, `${param} must be at most ${CATALOG_NAME_MAX} characters`);
  return trimmed;
}

/** An empty description removes it. */
export function checkDescription(description: string | undefined | null): string | null {
  if (description === undefined || description === null || description.trim() === '') return null;
  if (description.length > CATALOG_DESCRIPTION_MAX) throw invalidArgument('description', `description must be at most ${CATALOG_DESCRIPTION_MAX} characters`);
  return description;
}

/** A lowercase ISO 4217 code (a currency with a minor unit); empty means the default (`usd`). */
export function checkCurrency(currency: string | undefined, param = 'currency'): string {
  if (currency === undefined || currency === '') return DEFAULT_CURRENCY;
  return checkCurrencyCode(currency, param);
}

/** A non-negative integer amount in minor units, at most AMOUNT_MAX. */
export function checkAmount(amount: number, param: string): number {
  if (!Number.isSafeInteger(amount) || amount < 0 || amount > AMOUNT_MAX) {
    throw invalidArgument(param, `${param} must be an integer between 0 and ${AMOUNT_MAX} (minor units)`);
  }
  return amount;
}

export function checkOneOf<T extends string>(value: string, allowed: readonly T[], param: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw invalidArgument(param, `${param} must be one of ${allowed.join(', ')}`);
  return value as T;
}
