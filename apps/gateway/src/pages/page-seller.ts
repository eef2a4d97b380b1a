import type { Messages } from '@recur/i18n';
import type { ServiceClients } from '../infrastructure/service-clients';
import { html, type SafeHtml } from './page-kit';

/**
 * The seller a hosted page speaks for, as its invoices name it (docs/api/account.md): the
 * account's legal details, logo, brand colour and support contact from invoicing's seller profile.
 * A page still renders when invoicing cannot answer: the account's name alone.
 */
export interface PageSeller {
  /** The legal name, else the account's name. */
  name: string;
  addressLines: string[];
  taxId: string;
  registrationNumber: string;
  supportEmail: string;
  supportPhone: string;
  /** `#rrggbb`, or null for the pages' own blue. */
  brandColor: string | null;
  /** A `data:` URL of the logo (the pages load nothing from elsewhere), or null. */
  logo: string | null;
}

export async function pageSeller(services: ServiceClients, accountId: string, accountName: string): Promise<PageSeller> {
  const answer = await services.invoicing.getSellerProfile({ accountId, includeLogo: true }).catch(() => undefined);
  const profile = answer?.profile;
  const address = profile?.address;
  const cityLine = [address?.postalCode, address?.city].filter(Boolean).join(' ');
  return {
    name: profile?.legalName || accountName,
    addressLines: [address?.line1, address?.line2, cityLine, address?.region, address?.country].filter((line): line is string => Boolean(line)),
    taxId: profile?.taxId ?? '',
    registrationNumber: profile?.registrationNumber ?? '',
    supportEmail: profile?.supportEmail ?? '',
    supportPhone: profile?.supportPhone ?? '',
    brandColor: readableOnWhite(profile?.brandColor ?? '') ? profile!.brandColor : null,
    logo: profile?.logoContentType && answer?.logo?.length ? `data:${profile.logoContentType};base64,${Buffer.from(answer.logo).toString('base64')}` : null,
  };
}

/** The seller's block at the head of a page: logo, legal name, address, tax and registration numbers, in the page's language. */
export function sellerBlock(seller: PageSeller, words: Messages): SafeHtml {
  return html`<div class="seller" data-testid="seller-details">
${seller.logo ? html`<img class="logo" src="${seller.logo}" alt="${seller.name}">` : ''}
<p class="seller-name">${seller.name}</p>
${seller.addressLines.length > 0 ? html`<p class="muted">${seller.addressLines.map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}</p>` : ''}
${seller.taxId ? html`<p class="muted">${words.t('document.seller.tax_id', { tax_id: seller.taxId })}</p>` : ''}
${seller.registrationNumber ? html`<p class="muted">${words.t('document.seller.registration_number', { registration_number: seller.registrationNumber })}</p>` : ''}
</div>`;
}

/** The seller's support contact at the foot of a page ("Questions about this document: …"), or nothing. */
export function sellerContact(seller: PageSeller, words: Messages): SafeHtml | string {
  const contact = [seller.supportEmail, seller.supportPhone].filter(Boolean).join(words.t('document.contact_separator'));
  return contact ? html`<p class="muted" data-testid="seller-contact">${words.t('document.contact', { contact })}</p>` : '';
}

/**
 * Whether `#rrggbb` keeps WCAG AA contrast (4.5:1) with white, both ways the pages use it (text on
 * the white card, white text on a button): a lighter brand colour is left to the documents, and the
 * pages keep their own blue.
 */
function readableOnWhite(color: string): boolean {
  if (!/^#[0-9a-f]{6}$/i.test(color)) return false;
  const channel = (hex: string) => {
    const c = parseInt(hex, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(color.slice(1, 3)) + 0.7152 * channel(color.slice(3, 5)) + 0.0722 * channel(color.slice(5, 7));
  return 1.05 / (luminance + 0.05) >= 4.5;
}

/** The brand colour on headings and buttons, as documents use it. */
export function brandStyle(seller: PageSeller): SafeHtml | undefined {
  return seller.brandColor ? html`<style>h1,.seller-name{color:${seller.brandColor}} body button{background:${seller.brandColor};border-color:${seller.brandColor}}</style>` : undefined;
}
