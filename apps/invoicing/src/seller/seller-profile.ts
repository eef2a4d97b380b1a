import { isLocale, LOCALES } from '@recur/i18n';
import { invalidArgument } from '@recur/kernel';
import { EMAIL_PATTERN, isCountryCode } from '@recur/vocabulary';

/** The seller's postal address; `country` is ISO 3166-1 alpha-2, uppercase. */
export interface SellerAddress {
  line1: string;
  line2: string;
  city: string;
  region: string;
  postalCode: string;
  country: string;
}

/**
 * An account's legal details and branding, as its invoices and credit notes print them. One per
 * account, shared by its sandbox and live apps (they bill as the same business); every text is
 * empty until set, and a document falls back to the account's name for the seller.
 */
export interface SellerProfile {
  accountId: string;
  legalName: string;
  address: SellerAddress;
  taxId: string;
  registrationNumber: string;
  supportEmail: string;
  supportPhone: string;
  brandColor: string;
  invoiceFooter: string;
  logo: SellerLogo | null;
  /** The language of documents for customers with no preferred_locale; null: English (docs/localization.md#which-language). */
  defaultLocale: string | null;
  updatedAt: Date | null;
}

export interface SellerLogo {
  contentType: LogoContentType;
  bytes: Uint8Array;
}

export type LogoContentType = 'image/png' | 'image/svg+xml';

/** The fields an update sets; absent ones keep their value, `logo: null` removes the logo. */
export interface SellerProfileUpdate {
  legalName?: string;
  address?: SellerAddress;
  taxId?: string;
  registrationNumber?: string;
  supportEmail?: string;
  supportPhone?: string;
  brandColor?: string;
  invoiceFooter?: string;
  logo?: Uint8Array | null;
  /** '' clears it. */
  defaultLocale?: string;
}

/** A logo larger than this is refused: it is stored in the database and embedded in every PDF. */
export const LOGO_MAX_BYTES = 64 * 1024;

const TEXT_LIMITS = {
  legalName: ['legal_name', 200],
  taxId: ['tax_id', 64],
  registrationNumber: ['registration_number', 64],
  supportEmail: ['support_email', 320],
  supportPhone: ['support_phone', 32],
  invoiceFooter: ['invoice_footer', 500],
} as const;

const ADDRESS_LIMITS = { line1: 200, line2: 200, city: 100, region: 100, postalCode: 20, country: 2 } as const;
const ADDRESS_PARAMS: Record<keyof SellerAddress, string> = { line1: 'line1', line2: 'line2', city: 'city', region: 'region', postalCode: 'postal_code', country: 'country' };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * What an SVG may not hold: it is served as an image and drawn into PDFs, never run, but a
 * browser that opens it on its own would run a script, follow an event handler or load what a
 * foreign object embeds.
 */
const SVG_FORBIDDEN = /<script|<foreignobject|\son[a-z]+\s*=|javascript:|<!entity|xlink:href\s*=\s*["'](?!#)|\shref\s*=\s*["'](?!#)/i;

export const emptySellerProfile = (accountId: string): SellerProfile => ({
  accountId,
  legalName: '',
  address: { line1: '', line2: '', city: '', region: '', postalCode: '', country: '' },
  taxId: '',
  registrationNumber: '',
  supportEmail: '',
  supportPhone: '',
  brandColor: '',
  invoiceFooter: '',
  logo: null,
  defaultLocale: null,
  updatedAt: null,
});

/** The logo's type by its bytes (never by a name or a header the caller chose); refuses anything else. */
export function logoContentType(bytes: Uint8Array): LogoContentType {
  if (bytes.length > LOGO_MAX_BYTES) throw invalidArgument('logo', `logo must be at most ${LOGO_MAX_BYTES / 1024} KiB`);
  if (PNG_SIGNATURE.every((byte, index) => bytes[index] === byte)) return 'image/png';
  const text = Buffer.from(bytes).toString('utf8');
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text)) {
    if (SVG_FORBIDDEN.test(text)) throw invalidArgument('logo', 'an SVG logo must not hold scripts, event handlers, entities, foreign objects or external links');
    return 'image/svg+xml';
  }
  throw invalidArgument('logo', 'logo must be a PNG or an SVG image');
}

/** `profile` with `update` applied, each field checked; throws INVALID_ARGUMENT naming the first field that breaks its rule. */
export function updateSellerProfile(profile: SellerProfile, update: SellerProfileUpdate, now: Date): SellerProfile & { updatedAt: Date } {
  const next: SellerProfile & { updatedAt: Date } = { ...profile, address: { ...profile.address }, updatedAt: now };
  for (const [field, [param, max]] of Object.entries(TEXT_LIMITS) as [keyof typeof TEXT_LIMITS, (typeof TEXT_LIMITS)[keyof typeof TEXT_LIMITS]][]) {
    const value = update[field];
    if (value === undefined) continue;
    next[field] = checkText(value, param, max);
  }
  if (next.supportEmail !== '' && !EMAIL_PATTERN.test(next.supportEmail)) throw invalidArgument('support_email', 'support_email must be an e-mail address');
  if (update.brandColor !== undefined) {
    const color = update.brandColor.trim().toLowerCase();
    if (color !== '' && !/^#[0-9a-f]{6}$/.test(color)) throw invalidArgument('brand_color', 'brand_color must be a colour written #rrggbb');
    next.brandColor = color;
  }
  if (update.address) {
    for (const key of Object.keys(ADDRESS_LIMITS) as (keyof SellerAddress)[]) {
      next.address[key] = checkText(update.address[key] ?? '', `address.${ADDRESS_PARAMS[key]}`, ADDRESS_LIMITS[key]);
    }
    next.address.country = next.address.country.toUpperCase();
    if (next.address.country !== '' && !isCountryCode(next.address.country)) {
      throw invalidArgument('address.country', 'address.country must be an ISO 3166-1 alpha-2 code such as ZM');
    }
  }
  if (update.defaultLocale !== undefined) {
    if (update.defaultLocale !== '' && !isLocale(update.defaultLocale)) throw invalidArgument('default_locale', `default_locale must be one of ${LOCALES.join(', ')}`);
    next.defaultLocale = update.defaultLocale || null;
  }
  if (update.logo !== undefined) {
    next.logo = update.logo === null || update.logo.length === 0 ? null : { contentType: logoContentType(update.logo), bytes: update.logo };
  }
  return next;
}

function checkText(value: string, param: string, max: number): string {
  const trimmed = value.trim();
  if ([...trimmed].length > max) throw invalidArgument(param, `${param} must be at most ${max} characters`);
  // One line where one is printed (every field but the footer): a newline would break the layout.
  if (param !== 'invoice_footer' && /[\r\n]/.test(trimmed)) throw invalidArgument(param, `${param} must be one line`);
  return trimmed;
}

/** The address as printed, one line per part that is set. */
export function addressLines(address: SellerAddress): string[] {
  const cityLine = [address.postalCode, address.city].filter(Boolean).join(' ');
  return [address.line1, address.line2, cityLine, address.region, address.country].filter(Boolean);
}
