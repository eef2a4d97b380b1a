import { TAX_RATE_DISPLAY_NAME_MAX, TAX_REGION_MAX } from '@recur/vocabulary';
import { IsBoolean, IsNotEmpty, IsString, Matches, MaxLength, ValidateBy } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';
import { apply, Description, Metadata, OneOf } from '../plans/plans.dto';

const DisplayName = () => apply(IsString({ message: 'display_name must be a string' }), IsNotEmpty({ message: 'display_name must not be empty' }), MaxLength(TAX_RATE_DISPLAY_NAME_MAX, { message: `display_name must be at most ${TAX_RATE_DISPLAY_NAME_MAX} characters` }));
/** An ISO 3166-1 alpha-2 code; the service checks it is an assigned one. */
const Country = () => apply(IsString({ message: 'country must be a string' }), Matches(/^([A-Z]{2})?$/, { message: 'country must be an ISO 3166-1 alpha-2 country code in upper case, such as ZM or SN' }));
const Region = () => apply(IsString({ message: 'region must be a string' }), MaxLength(TAX_REGION_MAX, { message: `region must be at most ${TAX_REGION_MAX} characters` }));

export class CreateTaxRateDto {
  /** The tax's name as invoices print it: `VAT`, `TVA`, `GST`. */
  @DisplayName()
  display_name!: string;

  @Description()
  description?: string;

  /** 0 to 100 with at most four decimals (16, 7.5, 18.0001), kept exactly; never changes. */
  @ValidateBy({ name: 'isPercentage', validator: { validate: (value: unknown) => typeof value === 'number' || typeof value === 'string', defaultMessage: () => 'percentage must be a number from 0 to 100 with at most four decimals' } })
  @JSONSchema({ anyOf: [{ type: 'number', minimum: 0, maximum: 100 }, { type: 'string', pattern: '^\\d{1,3}(\\.\\d{1,4})?$' }], example: 16 } as never)
  percentage!: number | string;

  /** true: prices contain the tax; false: it is added on top. Never changes. */
  @IsBoolean({ message: 'inclusive must be a boolean' })
  inclusive!: boolean;

  @Optional() @Country()
  country?: string;

  @Optional() @Region()
  region?: string;

  /** The app's default rate, for customers no line or country rate fits; replaces the previous default. */
  @Optional() @IsBoolean({ message: 'account_default must be a boolean' })
  account_default?: boolean;

  @Metadata()
  metadata?: Record<string, string>;
}

export class UpdateTaxRateDto {
  @Optional() @DisplayName()
  display_name?: string;

  /** null or "" removes it. */
  @Description()
  description?: string | null;

  /** "" removes the country (and the region). */
  @Optional() @Country()
  country?: string;

  /** "" removes it. */
  @Optional() @Region()
  region?: string;

  /** false archives the rate: no rule chooses it any more (lines that name it keep it). */
  @Optional() @IsBoolean({ message: 'active must be a boolean' })
  active?: boolean;

  @Optional() @IsBoolean({ message: 'account_default must be a boolean' })
  account_default?: boolean;

  @Metadata()
  metadata?: Record<string, string>;
}

export class ListTaxRatesQueryDto extends ListQueryDto {
  /** `true`: active rates only; `false`: archived ones only. */
  @Optional() @OneOf('active', ['true', 'false'])
  active?: string;
}
