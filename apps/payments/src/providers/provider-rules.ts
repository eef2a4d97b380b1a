import { invalidArgument } from '@recur/kernel';
import { currencyExponent, type Money, toDecimalString } from '@recur/money';
import { type PaymentProvider, predictProviderLocally, PROVIDER_RULES, type ProviderCurrencyRule, type ProviderRules } from '@recur/vocabulary';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** `"1"`, `"0.1"`, `"50000.00"` (pawaPay's major units) in minor units of a currency of `exponent` decimals; null when not a plain decimal. */
export function minorUnits(amount: string, exponent: number): number | null {
  const parts = /^(\d{1,15})(?:\.(\d+))?$/.exec(amount.trim());
  if (!parts) return null;
  const fraction = (parts[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return null;
  return Number(parts[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
}

/**
 * Refuses (400) an amount `provider` cannot take, before anything is sent to it, as pawaPay's
 * active configuration describes the provider (`rules`): a currency it does not hold
 * (`currency_not_supported_by_provider`), more decimal places than it takes
 * (`amount_precision_not_supported`), or an amount outside its deposit limits
 * (`amount_below_provider_minimum`, `amount_above_provider_maximum`). `params` names the request's
 * fields (`amount`/`currency` by default; an invoice's `amount_due` for a payment).
 */
export function checkProviderAmount(rules: ProviderRules, provider: PaymentProvider, amount: Money, params: { amount: string; currency: string }): void {
  const rule = rules[provider] ?? PROVIDER_RULES[provider];
  const name = `${rule.displayName} (${provider})`;
  const currency = amount.currency.toUpperCase();
  const accepted = rule.currencies.find((candidate) => candidate.currency === currency);
  if (!accepted) {
    throw invalidArgument(params.currency, `${name} takes ${rule.currencies.map((candidate) => candidate.currency).join(' or ')}, not ${currency}: choose a provider of the invoice's currency.`, 'currency_not_supported_by_provider');
  }
  const exponent = currencyExponent(amount.currency);
  const decimals = accepted.decimalsInAmount === 'NONE' ? 0 : Math.min(2, exponent);
  if (amount.amountMinor % 10 ** (exponent - decimals) !== 0) {
    throw invalidArgument(params.amount, `${name} takes ${decimals === 0 ? 'whole amounts of' : `at most ${decimals} decimal places in`} ${currency}; ${toDecimalString(amount)} ${currency} is not one.`, 'amount_precision_not_supported');
  }
  const { min, max } = limitsOf(accepted, exponent);
  if (min !== null && amount.amountMinor < min) {
    throw invalidArgument(params.amount, `${name} takes at least ${accepted.minAmount} ${currency}; ${toDecimalString(amount)} ${currency} is below it.`, 'amount_below_provider_minimum');
  }
  if (max !== null && amount.amountMinor > max) {
    throw invalidArgument(params.amount, `${name} takes at most ${accepted.maxAmount} ${currency}; ${toDecimalString(amount)} ${currency} is above it.`, 'amount_above_provider_maximum');
  }
}

function limitsOf(rule: ProviderCurrencyRule, exponent: number): { min: number | null; max: number | null } {
  return { min: minorUnits(rule.minAmount, exponent), max: minorUnits(rule.maxAmount, exponent) };
}

/** The local prediction (pawaPay's predict-provider's stand-in): the number's country (libphonenumber) and its operator prefix (PROVIDER_NUMBER_PREFIXES). */
export function predictLocally(phoneNumber: string): PaymentProvider | null {
  const parsed = parsePhoneNumberFromString(phoneNumber.trim());
  if (!parsed?.country || !parsed.isValid()) return null;
  return predictProviderLocally(parsed.country, parsed.nationalNumber);
}

/** An international (`+…`) number valid in its country's numbering plan. */
export function isValidPhoneNumber(phoneNumber: string): boolean {
  return phoneNumber.startsWith('+') && (parsePhoneNumberFromString(phoneNumber)?.isValid() ?? false);
}
