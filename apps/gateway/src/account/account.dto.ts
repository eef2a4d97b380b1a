import { LOCALES } from '@recur/i18n';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { Nullable, Optional } from '../http/optional';

/** A text field of the seller profile: a string of at most `max` characters; `null` or `""` clears it. */
const ProfileText = (field: string, max: number) => (target: object, key: string | symbol) => {
  Nullable('string')(target, key);
  IsString({ message: `${field} must be a string` })(target, key);
  MaxLength(max, { message: `${field} must be at most ${max} characters` })(target, key);
};

/** The seller's postal address; every part optional, `country` ISO 3166-1 alpha-2. */
export class SellerAddressDto {
  @Optional() @IsString({ message: 'address.line1 must be a string' }) @MaxLength(200, { message: 'address.line1 must be at most 200 characters' })
  line1?: string;

  @Optional() @IsString({ message: 'address.line2 must be a string' }) @MaxLength(200, { message: 'address.line2 must be at most 200 characters' })
  line2?: string;

  @Optional() @IsString({ message: 'address.city must be a string' }) @MaxLength(100, { message: 'address.city must be at most 100 characters' })
  city?: string;

  @Optional() @IsString({ message: 'address.region must be a string' }) @MaxLength(100, { message: 'address.region must be at most 100 characters' })
  region?: string;

  @Optional() @IsString({ message: 'address.postal_code must be a string' }) @MaxLength(20, { message: 'address.postal_code must be at most 20 characters' })
  postal_code?: string;

  /** ISO 3166-1 alpha-2 (`ZM`). */
  @Optional() @IsString({ message: 'address.country must be a string' }) @Matches(/^([A-Za-z]{2})?$/, { message: 'address.country must be an ISO 3166-1 alpha-2 code such as ZM' })
  country?: string;
}

/** `POST /v1/account`: the fields to set; absent ones keep their value, `null` clears one. */
export class UpdateAccountDto {
  /** The business's registered name, printed as the seller (else the account's name). */
  @ProfileText('legal_name', 200)
  legal_name?: string | null;

  /** Replaces the whole address; `null` clears it. */
  @IsOptional() @IsObject({ message: 'address must be an object' }) @ValidateNested() @Type(() => SellerAddressDto)
  @JSONSchema({ type: ['object', 'null'], anyOf: [{ $ref: '#/components/schemas/SellerAddressDto' }, { type: 'null' }] } as never)
  address?: SellerAddressDto | null;

  /** Tax or VAT number (a Zambian TPIN, a Kenyan KRA PIN…). */
  @ProfileText('tax_id', 64)
  tax_id?: string | null;

  /** Company registration number. */
  @ProfileText('registration_number', 64)
  registration_number?: string | null;

  /** Where customers write about an invoice. */
  @ProfileText('support_email', 320)
  support_email?: string | null;

  /** Where customers call about an invoice. */
  @ProfileText('support_phone', 32)
  support_phone?: string | null;

  /** `#rrggbb`: headings of documents and pages. */
  @Nullable('string') @Matches(/^(#[0-9A-Fa-f]{6})?$/, { message: 'brand_color must be a colour written #rrggbb' })
  brand_color?: string | null;

  /** Printed at the foot of every invoice and credit note (terms, bank details), at most 500 characters. */
  @ProfileText('invoice_footer', 500)
  invoice_footer?: string | null;

  /** A PNG or SVG logo of at most 64 KiB as a data URL (`data:image/png;base64,…`); `null` removes it. */
  @Nullable('string') @IsString({ message: 'logo must be a data URL' }) @MaxLength(90_000, { message: 'logo must be at most 64 KiB' })
  logo?: string | null;

  /** The language of invoices, e-mails and pages for customers with no preferred_locale (`en`, `fr`); `null` returns to `en`. */
  @Nullable('string') @IsIn([...LOCALES], { message: `default_locale must be one of ${LOCALES.join(', ')}` })
  default_locale?: string | null;
}
