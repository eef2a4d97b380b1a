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
export type SandboxOutcome = 'succeed' | 'fail' | 'pending';

/**
 * The sandbox's magic phone numbers, like card test numbers: the last six digits of the
 * national number decide what Approve does (Decline always fails). Every other number succeeds.
 */
export const SANDBOX_MAGIC_SUFFIXES: Record<string, SandboxOutcome> = { '000001': 'succeed', '000002': 'fail', '000003': 'pending' };
/** One documented number per outcome (Zambia, MTN_MOMO_ZMB). */
export const SANDBOX_MAGIC_NUMBERS: Record<SandboxOutcome, string> = { succeed: '+260971000001', fail: '+260971000002', pending: '+260971000003' };

/** What Approve does on the sandbox payer page for an E.164 number. */
export function sandboxOutcome(e164: string): SandboxOutcome {
  return SANDBOX_MAGIC_SUFFIXES[e164.slice(-6)] ?? 'succeed';
}
