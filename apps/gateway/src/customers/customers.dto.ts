import { LOCALES } from '@recur/i18n';
import { JSONSchema } from 'class-validator-jsonschema';
import { CUSTOMER_EMAIL_MAX, CUSTOMER_NAME_MAX, EMAIL_PATTERN, TAX_EXEMPT_STATUSES, TAX_ID_TYPES, TAX_ID_VALUE_MAX, TAX_IDS_MAX } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateBy, ValidateNested } from 'class-validator';
import { METADATA_KEY_MAX, METADATA_MAX_KEYS, METADATA_VALUE_MAX } from '@recur/kernel';
import { ListQueryDto } from '../http/list';
import { Nullable, Optional } from '../http/optional';

/** Metadata: at most 50 string values; keys up to 40 characters, values up to 500. */
export const IsMetadata = () =>
  ValidateBy({
    name: 'isMetadata',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' && value !== null && !Array.isArray(value) &&
        Object.keys(value).length <= METADATA_MAX_KEYS &&
        Object.entries(value).every(([key, item]) => key.length >= 1 && key.length <= METADATA_KEY_MAX && typeof item === 'string' && item.length <= METADATA_VALUE_MAX),
      defaultMessage: () => `metadata must be an object of at most ${METADATA_MAX_KEYS} string values (keys up to ${METADATA_KEY_MAX} characters, values up to ${METADATA_VALUE_MAX})`,
    },
  });

// plans.dto imports IsMetadata from here: its `apply` cannot be imported back (a cycle), so it is repeated.
const apply = (...decorators: PropertyDecorator[]): PropertyDecorator => (target, key) => [...decorators].reverse().forEach((decorator) => decorator(target, key));
const AddressPart = (field: string) => apply(Optional(), IsString({ message: `address.${field} must be a string` }), MaxLength(200, { message: `address.${field} must be at most 200 characters` }));

/** A postal address; every part optional. country: ISO 3166-1 alpha-2, upper case (docs/api/customers.md#address-and-tax-status). */
export class AddressDto {
  @AddressPart('line1') line1?: string;
  @AddressPart('line2') line2?: string;
  @AddressPart('city') city?: string;
  @AddressPart('region') region?: string;
  @AddressPart('postal_code') postal_code?: string;
  @Optional() @IsString({ message: 'address.country must be a string' }) @Matches(/^([A-Z]{2})?$/, { message: 'address.country must be an ISO 3166-1 alpha-2 country code in upper case, such as ZM or SN' })
  country?: string;
}

/**
 * A tax id: Stripe's type name and the value. Its shape per type (eu_vat, ke_pin) is the
 * subscription service's rule (@recur/vocabulary checkTaxId), refused there as `tax_ids[i].value`.
 */
export class TaxIdDto {
  @IsString({ message: 'type must be a string' }) @IsIn([...TAX_ID_TYPES], { message: `type must be one of ${TAX_ID_TYPES.join(', ')}` })
  type!: string;

  @IsString({ message: 'value must be a string' }) @IsNotEmpty({ message: 'value must not be empty' }) @MaxLength(TAX_ID_VALUE_MAX, { message: `value must be at most ${TAX_ID_VALUE_MAX} characters` })
  value!: string;
}

const TAX_IDS_SCHEMA = { type: 'array', maxItems: TAX_IDS_MAX, items: { $ref: '#/components/schemas/TaxIdDto' } };
/** The generated schema is replaced whole (a function): merged, it would keep a `$ref` to `Array`. */
const TaxIdsField = (nullable: boolean) => apply(
  IsArray({ message: 'tax_ids must be an array' }), ArrayMaxSize(TAX_IDS_MAX, { message: `tax_ids must have at most ${TAX_IDS_MAX} entries` }),
  // ValidateNested alone would validate an item's own items as tax ids, taking `[[{…}]]`.
  IsObject({ each: true, message: 'tax_ids must hold objects of type and value' }),
  ValidateNested({ each: true }), Type(() => TaxIdDto),
  JSONSchema((() => (nullable ? { anyOf: [TAX_IDS_SCHEMA, { type: 'null' }] } : TAX_IDS_SCHEMA)) as never) as PropertyDecorator,
);

const AddressField = () => apply(IsObject({ message: 'address must be an object' }), ValidateNested(), Type(() => AddressDto));
/** A locale Recur has a catalogue for (docs/localization.md); null on update clears it. */
const PreferredLocale = () => IsIn([...LOCALES], { message: `preferred_locale must be one of ${LOCALES.join(', ')}` });
const TaxExempt = () => IsIn([...TAX_EXEMPT_STATUSES], { message: `tax_exempt must be one of ${TAX_EXEMPT_STATUSES.join(', ')}` });

export class CreateCustomerDto {
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(CUSTOMER_NAME_MAX)
  name!: string;

  @IsString({ message: 'email must be a string' })
  @IsNotEmpty({ message: 'email must not be empty' })
  @MaxLength(CUSTOMER_EMAIL_MAX)
  @Matches(EMAIL_PATTERN, { message: 'email must be a valid e-mail address' })
  email!: string;

  @Optional()
  @IsObject()
  @IsMetadata()
  metadata?: Record<string, string>;

  /** A sandbox test clock (`clock_…`) the customer lives on; its subscriptions follow the clock's time. */
  @Optional()
  @IsString({ message: 'test_clock must be a string' })
  @MaxLength(100)
  test_clock?: string;

  @Optional() @AddressField()
  address?: AddressDto;

  /** `none` (default): taxed; `exempt`: never taxed; `reverse`: reverse charge, no tax and the invoice says so. */
  @Optional() @TaxExempt()
  tax_exempt?: string;

  /** The language of the customer's invoices, e-mails and pages (`en`, `fr`); absent: the account's default_locale. */
  @Optional() @PreferredLocale()
  preferred_locale?: string;

  /** E.164 (`+221771234567`). */
  @Optional() @IsString({ message: 'phone must be a string' }) @MaxLength(32, { message: 'phone must be at most 32 characters' })
  phone?: string;

  /** At most five `{ type, value }` (docs/api/customers.md#tax-ids). */
  @Optional() @TaxIdsField(false)
  tax_ids?: TaxIdDto[];
}

export class UpdateCustomerDto {
  @Optional()
  @IsString({ message: 'name must be a string' })
  @IsNotEmpty({ message: 'name must not be empty' })
  @MaxLength(CUSTOMER_NAME_MAX)
  name?: string;

  @Optional()
  @IsString({ message: 'email must be a string' })
  @MaxLength(CUSTOMER_EMAIL_MAX)
  @Matches(EMAIL_PATTERN, { message: 'email must be a valid e-mail address' })
  email?: string;

  /** Merged into the existing pairs; a key set to "" is removed. */
  @Optional()
  @IsObject()
  @IsMetadata()
  metadata?: Record<string, string>;

  /** Replaces the whole address; null removes it. */
  @IsOptional() @AddressField()
  @JSONSchema({ type: ['object', 'null'], anyOf: [{ $ref: '#/components/schemas/AddressDto' }, { type: 'null' }] } as never)
  address?: AddressDto | null;

  @Optional() @TaxExempt()
  tax_exempt?: string;

  /** `en`, `fr`; null returns the customer to the account's default_locale. */
  @Nullable('string') @PreferredLocale()
  preferred_locale?: string | null;

  /** E.164; null removes it. */
  @Nullable('string') @IsString({ message: 'phone must be a string' }) @MaxLength(32, { message: 'phone must be at most 32 characters' })
  phone?: string | null;

  /** Replaces the whole list; null or [] removes every tax id. */
  @IsOptional() @TaxIdsField(true)
  tax_ids?: TaxIdDto[] | null;
}

export class ListCustomersQueryDto extends ListQueryDto {
  @Optional()
  @IsString()
  @MaxLength(CUSTOMER_EMAIL_MAX)
  email?: string;
}
