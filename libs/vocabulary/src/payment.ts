/**
 * Value sets of payments, shared by the gateway's request validation, the payments service's
 * rules and the pages. One definition each.
 */
/** `canceled`: its invoice stopped owing it (voided, or paid otherwise) before it settled, where the provider allows a cancel. */
export const PAYMENT_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * The mobile-money providers a payment may name, as pawaPay's Merchant API v2 codes them
 * (`<operator>_<ISO 3166-1 alpha-3>`), with the country whose numbers they serve (alpha-2, as
 * phone numbers are parsed). A phone number must belong to its provider's country.
 */
export const PAYMENT_PROVIDERS = {
  MTN_MOMO_BEN: 'BJ',
  MTN_MOMO_CMR: 'CM',
  ORANGE_CMR: 'CM',
  MTN_MOMO_CIV: 'CI',
  ORANGE_CIV: 'CI',
  VODACOM_MPESA_COD: 'CD',
  AIRTEL_COD: 'CD',
  ORANGE_COD: 'CD',
  MTN_MOMO_GHA: 'GH',
  VODAFONE_GHA: 'GH',
  AIRTELTIGO_GHA: 'GH',
  MPESA_KEN: 'KE',
  AIRTEL_MWI: 'MW',
  TNM_MWI: 'MW',
  VODACOM_MOZ: 'MZ',
  MTN_MOMO_NGA: 'NG',
  AIRTEL_NGA: 'NG',
  MTN_MOMO_RWA: 'RW',
  AIRTEL_RWA: 'RW',
  ORANGE_SEN: 'SN',
  FREE_SEN: 'SN',
  VODACOM_TZA: 'TZ',
  AIRTEL_TZA: 'TZ',
  TIGO_TZA: 'TZ',
  MTN_MOMO_UGA: 'UG',
  AIRTEL_OAPI_UGA: 'UG',
  MTN_MOMO_ZMB: 'ZM',
  AIRTEL_OAPI_ZMB: 'ZM',
  ZAMTEL_ZMB: 'ZM',
} as const satisfies Record<string, string>;
export type PaymentProvider = keyof typeof PAYMENT_PROVIDERS;
export const PAYMENT_PROVIDER_CODES = Object.keys(PAYMENT_PROVIDERS) as PaymentProvider[];

export function isPaymentProvider(value: string): value is PaymentProvider {
  return Object.prototype.hasOwnProperty.call(PAYMENT_PROVIDERS, value);
}

/** What the sandbox simulator does when the payer approves, by the phone number (docs/sandbox.md#magic-numbers). */
export type SandboxOutcome = 'succeed' | 'fail' | 'pending' | 'no_answer' | 'not_found';

/**
 * The sandbox's magic phone numbers, like card test numbers: the last six digits of the
 * national number decide what Approve does (Decline always fails). Every other number succeeds.
 */
export const SANDBOX_MAGIC_SUFFIXES: Record<string, SandboxOutcome> = { '000001': 'succeed', '000002': 'fail', '000003': 'pending', '000004': 'no_answer', '000005': 'not_found' };
/** One documented number per outcome (Zambia, MTN_MOMO_ZMB). */
export const SANDBOX_MAGIC_NUMBERS: Record<SandboxOutcome, string> = {
  succeed: '+260971000001', fail: '+260971000002', pending: '+260971000003', no_answer: '+260971000004', not_found: '+260971000005',
};

/** How a failing magic number fails: the code and message pawaPay's own failure would carry (lower-cased, as Recur's codes are). */
export const SANDBOX_FAILURES: Record<Extract<SandboxOutcome, 'fail' | 'no_answer' | 'not_found'>, { code: string; message: string }> = {
  fail: { code: 'insufficient_funds', message: "The payer's wallet does not hold enough funds." },
  no_answer: { code: 'payment_not_approved', message: 'The payer did not answer the payment prompt in time.' },
  not_found: { code: 'payer_not_found', message: 'The phone number has no mobile-money wallet at the provider.' },
};

/** What Approve does on the sandbox payer page for an E.164 number. */
export function sandboxOutcome(e164: string): SandboxOutcome {
  return SANDBOX_MAGIC_SUFFIXES[e164.slice(-6)] ?? 'succeed';
}

/**
 * Failure codes of an automatic charge that another attempt may turn into a payment: the payer
 * was short of funds or over a limit that resets, did not answer the prompt, or the provider was
 * briefly down (pawaPay's `INSUFFICIENT_BALANCE`, `PAYER_LIMIT_REACHED`, `PAYMENT_NOT_APPROVED`,
 * `PROVIDER_TEMPORARILY_UNAVAILABLE`, lower-cased; the sandbox's `insufficient_funds`). Every
 * other code — a number that does not exist (`payer_not_found`), a provider refusal, a rule the
 * amount breaks, a reason Recur cannot read — is not retried: the payment link goes out at once
 * (docs/api/dunning.md#smart-retries).
 */
export const RETRYABLE_PAYMENT_FAILURE_CODES = ['insufficient_funds', 'insufficient_balance', 'payer_limit_reached', 'payment_not_approved', 'provider_temporarily_unavailable'] as const;

export function isRetryablePaymentFailure(code: string): boolean {
  return (RETRYABLE_PAYMENT_FAILURE_CODES as readonly string[]).includes(code);
}

/** How many decimal places a provider takes in an amount, as pawaPay's active configuration says (`decimalsInAmount`). */
export type ProviderDecimals = 'TWO_PLACES' | 'NONE';

/** What a provider takes in one currency for a deposit: pawaPay's active configuration, `operationTypes.DEPOSIT`. */
export interface ProviderCurrencyRule {
  /** ISO 4217, upper case as pawaPay writes it. */
  currency: string;
  decimalsInAmount: ProviderDecimals;
  /** Major units, as pawaPay writes amounts ("1", "50000"). */
  minAmount: string;
  maxAmount: string;
}

/** One provider as Recur shows and checks it. */
export interface ProviderRule {
  /** How payers know it ("MTN MoMo Zambia"): the pages show this, never the code. */
  displayName: string;
  /** ISO 3166-1 alpha-3, as pawaPay names countries. */
  country: string;
  currencies: readonly ProviderCurrencyRule[];
}

export type ProviderRules = Record<PaymentProvider, ProviderRule>;

const rule = (displayName: string, country: string, ...currencies: [string, ProviderDecimals, string, string][]): ProviderRule => ({
  displayName,
  country,
  currencies: currencies.map(([currency, decimalsInAmount, minAmount, maxAmount]) => ({ currency, decimalsInAmount, minAmount, maxAmount })),
});

/**
 * The documented provider table (docs/api/payments.md#provider-rules-before-money-moves): each provider's currency,
 * decimal places and deposit limits, as pawaPay's active configuration (`GET /v2/active-conf`)
 * and its providers page give them for a sandbox account. The sandbox checks payments against
 * it; live mode reads pawaPay's own active configuration and falls back to this table only when
 * pawaPay cannot be reached. XOF, XAF, KES, RWF, TZS and UGX providers take whole amounts only.
 */
export const PROVIDER_RULES: ProviderRules = {
  MTN_MOMO_BEN: rule('MTN MoMo Benin', 'BEN', ['XOF', 'NONE', '100', '2000000']),
  MTN_MOMO_CMR: rule('MTN MoMo Cameroon', 'CMR', ['XAF', 'NONE', '100', '1000000']),
  ORANGE_CMR: rule('Orange Money Cameroon', 'CMR', ['XAF', 'NONE', '100', '1000000']),
  MTN_MOMO_CIV: rule('MTN MoMo Côte d’Ivoire', 'CIV', ['XOF', 'NONE', '100', '1500000']),
  ORANGE_CIV: rule('Orange Money Côte d’Ivoire', 'CIV', ['XOF', 'NONE', '100', '1500000']),
  VODACOM_MPESA_COD: rule('Vodacom M-Pesa DR Congo', 'COD', ['CDF', 'TWO_PLACES', '100', '5000000'], ['USD', 'TWO_PLACES', '0.1', '2500']),
  AIRTEL_COD: rule('Airtel Money DR Congo', 'COD', ['CDF', 'TWO_PLACES', '100', '5000000'], ['USD', 'TWO_PLACES', '0.1', '2500']),
  ORANGE_COD: rule('Orange Money DR Congo', 'COD', ['CDF', 'TWO_PLACES', '100', '5000000'], ['USD', 'TWO_PLACES', '0.1', '2500']),
  MTN_MOMO_GHA: rule('MTN MoMo Ghana', 'GHA', ['GHS', 'TWO_PLACES', '1', '20000']),
  VODAFONE_GHA: rule('Telecel Cash Ghana', 'GHA', ['GHS', 'TWO_PLACES', '1', '20000']),
  AIRTELTIGO_GHA: rule('AirtelTigo Money Ghana', 'GHA', ['GHS', 'TWO_PLACES', '1', '20000']),
  MPESA_KEN: rule('M-Pesa Kenya', 'KEN', ['KES', 'NONE', '1', '250000']),
  AIRTEL_MWI: rule('Airtel Money Malawi', 'MWI', ['MWK', 'TWO_PLACES', '100', '5000000']),
  TNM_MWI: rule('TNM Mpamba Malawi', 'MWI', ['MWK', 'TWO_PLACES', '100', '5000000']),
  VODACOM_MOZ: rule('Vodacom M-Pesa Mozambique', 'MOZ', ['MZN', 'TWO_PLACES', '1', '100000']),
  MTN_MOMO_NGA: rule('MTN MoMo Nigeria', 'NGA', ['NGN', 'TWO_PLACES', '100', '5000000']),
  AIRTEL_NGA: rule('Airtel Money Nigeria', 'NGA', ['NGN', 'TWO_PLACES', '100', '5000000']),
  MTN_MOMO_RWA: rule('MTN MoMo Rwanda', 'RWA', ['RWF', 'NONE', '100', '2000000']),
  AIRTEL_RWA: rule('Airtel Money Rwanda', 'RWA', ['RWF', 'NONE', '100', '2000000']),
  ORANGE_SEN: rule('Orange Money Senegal', 'SEN', ['XOF', 'NONE', '100', '2000000']),
  FREE_SEN: rule('Free Money Senegal', 'SEN', ['XOF', 'NONE', '100', '2000000']),
  VODACOM_TZA: rule('Vodacom M-Pesa Tanzania', 'TZA', ['TZS', 'NONE', '1000', '5000000']),
  AIRTEL_TZA: rule('Airtel Money Tanzania', 'TZA', ['TZS', 'NONE', '1000', '5000000']),
  TIGO_TZA: rule('Mixx by Yas Tanzania', 'TZA', ['TZS', 'NONE', '1000', '5000000']),
  MTN_MOMO_UGA: rule('MTN MoMo Uganda', 'UGA', ['UGX', 'NONE', '500', '5000000']),
  AIRTEL_OAPI_UGA: rule('Airtel Money Uganda', 'UGA', ['UGX', 'NONE', '500', '5000000']),
  MTN_MOMO_ZMB: rule('MTN MoMo Zambia', 'ZMB', ['ZMW', 'TWO_PLACES', '1', '50000']),
  AIRTEL_OAPI_ZMB: rule('Airtel Money Zambia', 'ZMB', ['ZMW', 'TWO_PLACES', '1', '50000']),
  ZAMTEL_ZMB: rule('Zamtel Kwacha Zambia', 'ZMB', ['ZMW', 'TWO_PLACES', '1', '50000']),
};

/** The name payers know a provider by; an unknown code is shown as it is. */
export function providerDisplayName(provider: string): string {
  return isPaymentProvider(provider) ? PROVIDER_RULES[provider].displayName : provider;
}

/**
 * The leading digits of the national (significant) number each operator was allocated, the local
 * stand-in for pawaPay's predict-provider where one country has several providers. Numbers move
 * between operators (portability), so a prediction is a default the payer may change, never a rule.
 */
export const PROVIDER_NUMBER_PREFIXES: Partial<Record<PaymentProvider, readonly string[]>> = {
  MTN_MOMO_CMR: ['67', '650', '651', '652', '653', '654', '68'],
  ORANGE_CMR: ['69', '655', '656', '657', '658', '659'],
  MTN_MOMO_CIV: ['05'],
  ORANGE_CIV: ['07'],
  VODACOM_MPESA_COD: ['81', '82', '83'],
  AIRTEL_COD: ['97', '98', '99'],
  ORANGE_COD: ['80', '84', '85', '89'],
  MTN_MOMO_GHA: ['24', '25', '53', '54', '55', '59'],
  VODAFONE_GHA: ['20', '50'],
  AIRTELTIGO_GHA: ['26', '27', '56', '57'],
  AIRTEL_MWI: ['99', '98'],
  TNM_MWI: ['88', '89'],
  MTN_MOMO_NGA: ['703', '706', '803', '806', '810', '813', '814', '816', '903', '906', '913', '916'],
  AIRTEL_NGA: ['701', '708', '802', '808', '812', '901', '902', '904', '907', '912'],
  MTN_MOMO_RWA: ['78', '79'],
  AIRTEL_RWA: ['72', '73'],
  ORANGE_SEN: ['77', '78'],
  FREE_SEN: ['76'],
  VODACOM_TZA: ['74', '75', '76'],
  AIRTEL_TZA: ['68', '69', '78'],
  TIGO_TZA: ['65', '67', '71'],
  MTN_MOMO_UGA: ['76', '77', '78', '79'],
  AIRTEL_OAPI_UGA: ['70', '74', '75'],
  MTN_MOMO_ZMB: ['76', '96'],
  AIRTEL_OAPI_ZMB: ['77', '97'],
  ZAMTEL_ZMB: ['75', '95'],
};

/**
 * The provider a national number of `country` (alpha-2) most likely belongs to: the only provider
 * of its country, else the one whose allocated prefix it starts with (the longest); null when
 * none does.
 */
export function predictProviderLocally(country: string, nationalNumber: string): PaymentProvider | null {
  const candidates = PAYMENT_PROVIDER_CODES.filter((code) => PAYMENT_PROVIDERS[code] === country);
  if (candidates.length === 1) return candidates[0];
  let best: { provider: PaymentProvider; length: number } | null = null;
  for (const provider of candidates) {
    for (const prefix of PROVIDER_NUMBER_PREFIXES[provider] ?? []) {
      if (nationalNumber.startsWith(prefix) && (!best || prefix.length > best.length)) best = { provider, length: prefix.length };
    }
  }
  return best?.provider ?? null;
}
