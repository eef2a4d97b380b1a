/**
 * Customers' tax ids (docs/api/customers.md#tax-ids): Stripe's type names for the countries
 * Recur's payment provider serves, plus EU VAT. Shared by the service's rules and the customer
 * portal's form, so both refuse the same values for the same reason.
 */
export const TAX_ID_TYPES = [
  'eu_vat', // European Union VAT number
  'bj_ifu', // Benin
  'cd_nif', // Democratic Republic of the Congo
  'cm_niu', // Cameroon
  'ke_pin', // Kenya (KRA PIN)
  'mz_nuit', // Mozambique
  'ng_tin', // Nigeria
  'sn_ninea', // Senegal
  'tz_vat', // Tanzania
  'ug_tin', // Uganda
  'za_vat', // South Africa
  'zm_tin', // Zambia
] as const;
export type TaxIdType = (typeof TAX_ID_TYPES)[number];

export const TAX_IDS_MAX = 5;
export const TAX_ID_VALUE_MAX = 64;

/**
 * The shape of an EU VAT number after its two-letter prefix, per member state, as the EU's VIES
 * service publishes them (`EL` is Greece; `XI` Northern Ireland under the Windsor framework).
 * Only the shape is checked, not the check digit nor whether the number is registered.
 */
const EU_VAT_PATTERNS: Record<string, RegExp> = {
  AT: /^U\d{8}$/, BE: /^[01]\d{9}$/, BG: /^\d{9,10}$/, CY: /^\d{8}[A-Z]$/, CZ: /^\d{8,10}$/, DE: /^\d{9}$/,
  DK: /^\d{8}$/, EE: /^\d{9}$/, EL: /^\d{9}$/, ES: /^[A-Z0-9]\d{7}[A-Z0-9]$/, FI: /^\d{8}$/, FR: /^[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^\d{11}$/, HU: /^\d{8}$/, IE: /^\d[A-Z0-9+*]\d{5}[A-W][A-I]?$/, IT: /^\d{11}$/, LT: /^(\d{9}|\d{12})$/,
  LU: /^\d{8}$/, LV: /^\d{11}$/, MT: /^\d{8}$/, NL: /^\d{9}B\d{2}$/, PL: /^\d{10}$/, PT: /^\d{9}$/, RO: /^\d{2,10}$/,
  SE: /^\d{12}$/, SI: /^\d{8}$/, SK: /^\d{10}$/, XI: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
};

/** A Kenya Revenue Authority PIN: a letter, nine digits, a letter (`P051234567X`). */
const KRA_PIN = /^[A-Z]\d{9}[A-Z]$/;

/** What a tax id check found: the value as stored, or which part is wrong and why (in English; the portal shows its own words). */
export type TaxIdCheck =
  | { ok: true; type: TaxIdType; value: string }
  | { ok: false; part: 'type' | 'value'; reason: 'unknown_type' | 'empty' | 'too_long' | 'eu_vat_country' | 'eu_vat_shape' | 'ke_pin_shape'; message: string };

export const isTaxIdType = (type: string): type is TaxIdType => (TAX_ID_TYPES as readonly string[]).includes(type);

/**
 * Checks one tax id. The value is trimmed; the two types whose format is public (`eu_vat`,
 * `ke_pin`) are also written as their authorities do (upper case, no spaces, dots or dashes) and
 * checked against it; every other type is kept as typed, non-empty and at most 64 characters.
 */
export function checkTaxId(type: string, value: string): TaxIdCheck {
  if (!isTaxIdType(type)) return { ok: false, part: 'type', reason: 'unknown_type', message: `must be one of ${TAX_ID_TYPES.join(', ')}` };
  const trimmed = value.trim();
  if (trimmed === '') return { ok: false, part: 'value', reason: 'empty', message: 'must not be empty' };
  if (trimmed.length > TAX_ID_VALUE_MAX) return { ok: false, part: 'value', reason: 'too_long', message: `must be at most ${TAX_ID_VALUE_MAX} characters` };
  if (type === 'eu_vat') {
    const compact = trimmed.toUpperCase().replace(/[\s.-]/g, '');
    const pattern = EU_VAT_PATTERNS[compact.slice(0, 2)];
    if (!pattern) return { ok: false, part: 'value', reason: 'eu_vat_country', message: 'must start with an EU member state\'s VAT prefix (AT, BE, … EL for Greece, XI for Northern Ireland)' };
    if (!pattern.test(compact.slice(2))) return { ok: false, part: 'value', reason: 'eu_vat_shape', message: `is not shaped as a VAT number of ${compact.slice(0, 2)} (such as DE123456789, FRAB123456789)` };
    return { ok: true, type, value: compact };
  }
  if (type === 'ke_pin') {
    const compact = trimmed.toUpperCase().replace(/[\s.-]/g, '');
    if (!KRA_PIN.test(compact)) return { ok: false, part: 'value', reason: 'ke_pin_shape', message: 'must be a KRA PIN: a letter, nine digits and a letter (such as P051234567X)' };
    return { ok: true, type, value: compact };
  }
  return { ok: true, type, value: trimmed };
}
