import { CURRENCY_CODES } from '@recur/money';
import { AMOUNT_MAX, CATALOG_DESCRIPTION_MAX, CATALOG_NAME_MAX, METRIC_NAME_PATTERN, PACKAGE_SIZE_MAX, PLAN_STATUSES, USAGE_LIMIT_MAX } from '@recur/vocabulary';
import { BILLING_INTERVALS, PRICE_COMPONENT_TYPES, PRICING_MODELS, TIERS_MAX } from '@recur/pricing';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsIn, IsInt, IsNotEmpty, IsObject, IsString, Matches, Max, MaxLength, Min, ValidateIf, ValidateNested,
} from 'class-validator';
import { IsMetadata } from '../customers/customers.dto';
import { ListQueryDto } from '../http/list';
import { Nullable, Optional } from '../http/optional';

/** Shared field decorators of the catalog's request bodies. */
export const amount = (field: string) => [
  IsInt({ message: `${field} must be an integer amount in minor units` }),
  Min(0, { message: `${field} must not be negative` }),
  Max(AMOUNT_MAX, { message: `${field} must be at most ${AMOUNT_MAX}` }),
];
/** Applies decorators as if stacked in this order (stacked decorators run bottom-up). */
export const apply = (...decorators: PropertyDecorator[]): PropertyDecorator => (target, key) => [...decorators].reverse().forEach((decorator) => decorator(target, key));
export const Name = () => apply(IsString({ message: 'name must be a string' }), IsNotEmpty({ message: 'name must not be empty' }), MaxLength(CATALOG_NAME_MAX, { message: `name must be at most ${CATALOG_NAME_MAX} characters` }));
export const Description = () => apply(Nullable('string'), IsString({ message: 'description must be a string' }), MaxLength(CATALOG_DESCRIPTION_MAX, { message: `description must be at most ${CATALOG_DESCRIPTION_MAX} characters` }));
export const Currency = () => apply(IsString({ message: 'currency must be a string' }), IsIn(CURRENCY_CODES, { message: 'currency must be a lowercase ISO 4217 code such as usd' }));
export const Amount = (field: string) => apply(...amount(field));
export const Metadata = () => apply(Optional(), IsObject(), IsMetadata());
export const OneOf = (field: string, values: readonly string[]) => IsIn([...values], { message: `${field} must be one of ${values.join(', ')}` });
/** `tax_rates`: the tax rate ids (`txr_…`, at most one) a line, a plan or an add-on names. */
export const TaxRates = () =>
  apply(
    Optional(),
    IsArray({ message: 'tax_rates must be an array' }),
    ArrayMaxSize(1, { message: 'tax_rates holds at most one tax rate' }),
    IsString({ each: true, message: 'tax_rates must hold tax rate ids' }),
    MaxLength(64, { each: true, message: 'tax_rates must hold tax rate ids' }),
  );
/**
 * A value of one of the catalog's value sets (pricing model, billing interval, price component or
 * coupon type, coupon duration). The gateway checks only that it is a string; the catalog checks it
 * is one of its set and refuses it with INVALID_ARGUMENT, which the gateway answers as the documented
 * `400 parameter_invalid` with its `param`. So a catalog release that adds a value needs no gateway
 * release, and an older gateway passes it on (docs/operations/upgrades.md#value-sets-belong-to-their-service).
 * `documented` only lists, in the OpenAPI document, the values the catalog of this build accepts.
 */
export const CatalogValue = (field: string, documented: readonly string[]) =>
  apply(IsString({ message: `${field} must be a string` }), JSONSchema({ type: 'string', enum: [...documented] }) as PropertyDecorator);
/** An array of catalog values (billing_intervals), checked as CatalogValue. */
export const CatalogValues = (field: string, documented: readonly string[]) =>
  apply(
    IsArray({ message: `${field} must be an array` }),
    ArrayMinSize(1, { message: `${field} must not be empty` }),
    IsString({ each: true, message: `${field} must hold only strings` }),
    JSONSchema({ type: 'array', minItems: 1, items: { type: 'string', enum: [...documented] } }) as PropertyDecorator,
  );

export class CreatePlanDto {
  @Name()
  name!: string;

  @Description()
  description?: string;

  /** flat_rate, per_unit, package, graduated (tiered) or volume. */
  @IsDefined() @CatalogValue('pricing_model', PRICING_MODELS)
  pricing_model!: string;

  /** The monthly base amount in minor units. */
  @Amount('amount_monthly')
  amount_monthly!: number;

  /** Lowercase ISO 4217; default usd. */
  @Optional() @Currency()
  currency?: string;

  /** Units per package (package model only); default 1. */
  @Optional() @IsInt({ message: 'package_size must be an integer' }) @Min(1, { message: 'package_size must be at least 1' }) @Max(PACKAGE_SIZE_MAX, { message: `package_size must be at most ${PACKAGE_SIZE_MAX}` })
  package_size?: number;

  /** The intervals the plan may be sold on; default all (monthly, quarterly, yearly). */
  @Optional() @CatalogValues('billing_intervals', BILLING_INTERVALS)
  billing_intervals?: string[];

  @Metadata()
  metadata?: Record<string, string>;

  /** The tax rate (`txr_…`, active, at most one) the plan's invoice lines carry; subscriptions keep the rates of when they were sold. */
  @TaxRates()
  tax_rates?: string[];
}

export class UpdatePlanDto {
  @Optional() @Name()
  name?: string;

  /** null or "" removes it. */
  @Description()
  description?: string | null;

  @Optional() @CatalogValue('pricing_model', PRICING_MODELS)
  pricing_model?: string;

  @Optional() @Amount('amount_monthly')
  amount_monthly?: number;

  @Optional() @Currency()
  currency?: string;

  @Optional() @IsInt({ message: 'package_size must be an integer' }) @Min(1, { message: 'package_size must be at least 1' }) @Max(PACKAGE_SIZE_MAX, { message: `package_size must be at most ${PACKAGE_SIZE_MAX}` })
  package_size?: number;

  @Optional() @CatalogValues('billing_intervals', BILLING_INTERVALS)
  billing_intervals?: string[];

  /** Merged into the existing pairs; a key set to "" is removed. */
  @Metadata()
  metadata?: Record<string, string>;

  /** Replaces the plan's tax rates (`[]` clears them); new subscriptions and plan changes take them, running ones keep theirs. */
  @TaxRates()
  tax_rates?: string[];
}

export class ListPlansQueryDto extends ListQueryDto {
  @Optional() @OneOf('status', PLAN_STATUSES)
  status?: string;
}

export class ClonePlanDto {
  /** The copy's name; default the original's name with " (copy)". */
  @Optional() @Name()
  name?: string;
}

export class PlanTierDto {
  /** The last unit (inclusive) of the tier; null (or absent) for the open-ended last tier. */
  @JSONSchema({ type: ['integer', 'null'], minimum: 1 })
  @ValidateIf((tier: PlanTierDto) => tier.up_to !== null && tier.up_to !== undefined)
  @IsInt({ message: 'up_to must be a positive integer or null' }) @Min(1, { message: 'up_to must be a positive integer or null' })
  up_to?: number | null;

  @Amount('unit_amount')
  unit_amount!: number;

  /** Charged once when the quantity reaches the tier; default 0. */
  @Optional() @Amount('flat_amount')
  flat_amount?: number;
}

export class ReplaceTiersDto {
  @IsArray({ message: 'tiers must be an array' })
  @ArrayMinSize(1, { message: 'tiers must hold at least one tier' })
  @ArrayMaxSize(TIERS_MAX, { message: `tiers may hold at most ${TIERS_MAX} tiers` })
  @ValidateNested({ each: true })
  @Type(() => PlanTierDto)
  @JSONSchema({ type: 'array', minItems: 1, maxItems: TIERS_MAX, items: { $ref: '#/components/schemas/PlanTierDto' } })
  tiers!: PlanTierDto[];
}

const MetricName = () => apply(IsString({ message: 'metric_name must be a string' }), Matches(METRIC_NAME_PATTERN, { message: 'metric_name must be 1 to 100 characters: lowercase letters, digits, _, . or -, starting with a letter' }));

const UsageLimit = () =>
  apply(IsInt({ message: 'usage_limit must be an integer' }), Min(1, { message: 'usage_limit must be at least 1' }), Max(USAGE_LIMIT_MAX, { message: `usage_limit must be at most ${USAGE_LIMIT_MAX}` }));

export class CreatePriceComponentDto {
  /** metered (per unit of usage of metric_name) or fixed (a monthly fee). */
  @IsDefined() @CatalogValue('type', PRICE_COMPONENT_TYPES)
  type!: string;

  @Name()
  name!: string;

  /** Required for metered, not allowed for fixed. */
  @Optional() @MetricName()
  metric_name?: string;

  /** Price per unit of usage (metered) or the monthly fee (fixed), minor units of the plan's currency. */
  @Amount('unit_amount')
  unit_amount!: number;

  /** Usage per month that is free (metered only); default 0. */
  @Optional() @IsInt({ message: 'included_quantity must be an integer' }) @Min(0, { message: 'included_quantity must not be negative' }) @Max(AMOUNT_MAX)
  included_quantity?: number;

  /** The plan's limit of the metric per period (metered only): alerts at 80 % and 100 % of it; a subscription's own limit overrides it. */
  @Optional() @UsageLimit()
  usage_limit?: number;
}

export class UpdatePriceComponentDto {
  @Optional() @Name()
  name?: string;

  @Optional() @MetricName()
  metric_name?: string;

  @Optional() @Amount('unit_amount')
  unit_amount?: number;

  @Optional() @IsInt({ message: 'included_quantity must be an integer' }) @Min(0, { message: 'included_quantity must not be negative' }) @Max(AMOUNT_MAX)
  included_quantity?: number;

  /** null removes the limit. */
  @Nullable('integer') @UsageLimit()
  usage_limit?: number | null;
}

export class ListPriceComponentsQueryDto extends ListQueryDto {}
