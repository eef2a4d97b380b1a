import { DEFAULT_LOCALE, LOCALES } from '@recur/i18n';
import type { sellerProfileV1 } from '@recur/contracts';
import { invalidArgument } from '@recur/kernel';
import { defineRoutes, responseSchema, route } from '../routing/define-routes';
import { UpdateAccountDto } from './account.dto';

/** The public JSON of the caller's account: its name and its seller details and branding. */
export interface AccountJson {
  id: string;
  object: 'account';
  name: string;
  legal_name: string | null;
  address: { line1: string | null; line2: string | null; city: string | null; region: string | null; postal_code: string | null; country: string | null } | null;
  tax_id: string | null;
  registration_number: string | null;
  support_email: string | null;
  support_phone: string | null;
  brand_color: string | null;
  invoice_footer: string | null;
  logo: { content_type: string; size: number; data_url: string } | null;
  default_locale: string;
  updated: number | null;
}

const nullableText = (description: string) => ({ type: ['string', 'null'], description });

export const ACCOUNT_SCHEMA = responseSchema<AccountJson>('Account', {
  type: 'object',
  required: ['id', 'object', 'name', 'legal_name', 'address', 'tax_id', 'registration_number', 'support_email', 'support_phone', 'brand_color', 'invoice_footer', 'logo', 'default_locale', 'updated'],
  properties: {
    id: { type: 'string', example: 'acct_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['account'] },
    name: { type: 'string', description: "The account's name (set by the operator); the seller when legal_name is null." },
    legal_name: nullableText('The registered business name printed as the seller on invoices, credit notes and e-mails.'),
    address: {
      anyOf: [{
        type: 'object',
        required: ['line1', 'line2', 'city', 'region', 'postal_code', 'country'],
        properties: {
          line1: nullableText('Street and number.'), line2: nullableText('Building, floor or PO box.'), city: nullableText('City or town.'),
          region: nullableText('Province, state or region.'), postal_code: nullableText('Postal code.'), country: nullableText('ISO 3166-1 alpha-2, e.g. ZM.'),
        },
      }, { type: 'null' }],
      description: 'Where the business is registered; null until set.',
    },
    tax_id: nullableText('Tax or VAT number.'),
    registration_number: nullableText('Company registration number.'),
    support_email: nullableText('Where customers write about an invoice.'),
    support_phone: nullableText('Where customers call about an invoice.'),
    brand_color: nullableText('`#rrggbb`, the colour of headings on documents.'),
    invoice_footer: nullableText('Printed at the foot of every invoice and credit note.'),
    logo: {
      anyOf: [{
        type: 'object', required: ['content_type', 'size', 'data_url'],
        properties: { content_type: { type: 'string', enum: ['image/png', 'image/svg+xml'] }, size: { type: 'integer', description: 'Bytes.' }, data_url: { type: 'string', description: 'The logo as a data URL.' } },
      }, { type: 'null' }],
    },
    default_locale: { type: 'string', enum: [...LOCALES], description: "The language of invoices, credit notes, e-mails and hosted pages for customers whose preferred_locale is null (docs/localization.md#which-language)." },
    updated: { type: ['integer', 'null'], description: 'When the seller details last changed (unix seconds); null if never.' },
  },
});

const orNull = (value: string | undefined): string | null => value || null;

function present(accountId: string, name: string, profile: sellerProfileV1.SellerProfile | undefined, logo: Uint8Array | undefined): AccountJson {
  const address = profile?.address;
  const hasAddress = address && [address.line1, address.line2, address.city, address.region, address.postalCode, address.country].some(Boolean);
  return {
    id: accountId,
    object: 'account',
    name,
    legal_name: orNull(profile?.legalName),
    address: hasAddress
      ? { line1: orNull(address.line1), line2: orNull(address.line2), city: orNull(address.city), region: orNull(address.region), postal_code: orNull(address.postalCode), country: orNull(address.country) }
      : null,
    tax_id: orNull(profile?.taxId),
    registration_number: orNull(profile?.registrationNumber),
    support_email: orNull(profile?.supportEmail),
    support_phone: orNull(profile?.supportPhone),
    brand_color: orNull(profile?.brandColor),
    invoice_footer: orNull(profile?.invoiceFooter),
    logo: profile?.logoContentType && logo && logo.length > 0
      ? { content_type: profile.logoContentType, size: Number(profile.logoSize), data_url: `data:${profile.logoContentType};base64,${Buffer.from(logo).toString('base64')}` }
      : null,
    default_locale: profile?.defaultLocale || DEFAULT_LOCALE,
    updated: profile?.updated ? Number(profile.updated) : null,
  };
}

/** A data URL's bytes (`data:<type>;base64,<data>`); the service judges what the bytes are, not the declared type. */
function logoBytes(dataUrl: string): Uint8Array {
  const match = /^data:image\/(png|svg\+xml);base64,([A-Za-z0-9+/]+={0,2})$/.exec(dataUrl);
  if (!match) throw invalidArgument('logo', 'logo must be a data URL of a PNG or SVG image: data:image/png;base64,… or data:image/svg+xml;base64,…');
  return new Uint8Array(Buffer.from(match[2], 'base64'));
}

/** `/v1/account` (beyond the specification: the seller details every invoice prints) → InvoicingService. */
export const ACCOUNT_ROUTES = defineRoutes('Account', [
  route({
    method: 'GET', path: '/v1/account', summary: "Retrieve the account: its name, seller details and branding", response: ACCOUNT_SCHEMA,
    handler: async ({ services, tenant, accountName }) => {
      const { profile, logo } = await services.invoicing.getSellerProfile({ accountId: tenant.accountId, includeLogo: true });
      return present(tenant.accountId, accountName, profile, logo);
    },
  }),
  route({
    method: 'POST', path: '/v1/account', summary: 'Update the seller details and branding printed on invoices', body: UpdateAccountDto, response: ACCOUNT_SCHEMA,
    handler: async ({ services, tenant, accountName, body }) => {
      const text = (value: string | null | undefined) => (value === undefined ? undefined : value ?? '');
      const address = body.address === undefined ? undefined : {
        line1: body.address?.line1 ?? '', line2: body.address?.line2 ?? '', city: body.address?.city ?? '',
        region: body.address?.region ?? '', postalCode: body.address?.postal_code ?? '', country: body.address?.country ?? '',
      };
      const logo = body.logo === undefined ? undefined : body.logo === null ? new Uint8Array() : logoBytes(body.logo);
      await services.invoicing.updateSellerProfile({
        accountId: tenant.accountId,
        legalName: text(body.legal_name), taxId: text(body.tax_id), registrationNumber: text(body.registration_number),
        supportEmail: text(body.support_email), supportPhone: text(body.support_phone), brandColor: text(body.brand_color),
        invoiceFooter: text(body.invoice_footer), defaultLocale: text(body.default_locale), ...(address ? { address } : {}), ...(logo ? { logo } : {}),
      });
      const { profile, logo: stored } = await services.invoicing.getSellerProfile({ accountId: tenant.accountId, includeLogo: true });
      return present(tenant.accountId, accountName, profile, stored);
    },
  }),
]);
