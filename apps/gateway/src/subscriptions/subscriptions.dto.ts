import { SUBSCRIPTION_STATUS_VALUES } from '@recur/contracts';
import { BILLING_INTERVALS } from '@recur/pricing';
import { COLLECTION_METHODS, UNIX_SECONDS_MAX, UNIX_SECONDS_MIN } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { CatalogValue, Metadata, OneOf } from '../plans/plans.dto';
import { Optional } from '../http/optional';

const ID_MAX = 100;
const QUANTITY_MAX = 1_000_000;
const ADD_ONS_MAX = 20;
const Quantity = () => (target: object, key: string | symbol) => {
  IsInt({ message: 'quantity must be an integer' })(target, key);
  Min(1, { message: 'quantity must be at least 1' })(target, key);
  Max(QUANTITY_MAX, { message: `quantity must be at most ${QUANTITY_MAX}` })(target, key);
};
const AddonId = () => (target: object, key: string | symbol) => {
  IsDefined({ message: 'addon is required' })(target, key);
  IsString({ message: 'addon must be a string' })(target, key);
  MaxLength(ID_MAX)(target, key);
};
const PromotionCodeText = () => (target: object, key: string | symbol) => {
  IsString({ message: 'promotion_code must be a string' })(target, key);
  IsNotEmpty({ message: 'promotion_code must not be empty' })(target, key);
  MaxLength(ID_MAX)(target, key);
};

/** An add-on to attach (POST …/addons, and each of a new subscription's add_ons): an on-sale add-on of the catalog and its quantity. */
export class SubscriptionAddonDto {
  /** The add-on (`addon_…`), on sale and in the plan's currency. */
  @AddonId()
  addon!: string;

  /** Default 1. */
  @Optional() @Quantity()
  quantity?: number;
}
const UnixSeconds = (field: string) => (target: object, key: string | symbol) => {
  IsInt({ message: `${field} must be unix seconds (an integer)` })(target, key);
  Min(UNIX_SECONDS_MIN, { message: `${field} must be unix seconds` })(target, key);
  Max(UNIX_SECONDS_MAX, { message: `${field} must be at most ${UNIX_SECONDS_MAX} (9999-12-31)` })(target, key);
};

export class CreateSubscriptionDto {
  /** The customer to subscribe (`cus_…`), of the same app and not deleted. */
  @IsDefined({ message: 'customer is required' }) @IsString({ message: 'customer must be a string' }) @MaxLength(ID_MAX)
  customer!: string;

  /** An active plan (`plan_…`). */
  @IsDefined({ message: 'plan is required' }) @IsString({ message: 'plan must be a string' }) @MaxLength(ID_MAX)
  plan!: string;

  /** monthly, quarterly or yearly; one the plan offers. */
  @IsDefined({ message: 'billing_interval is required' }) @CatalogValue('billing_interval', BILLING_INTERVALS)
  billing_interval!: string;

  /** Default 1. */
  @Optional() @IsInt({ message: 'quantity must be an integer' }) @Min(1, { message: 'quantity must be at least 1' }) @Max(1_000_000, { message: 'quantity must be at most 1000000' })
  quantity?: number;

  /** A trial of this many days (1–730); not with trial_end. */
  @Optional() @IsInt({ message: 'trial_days must be an integer' }) @Min(1, { message: 'trial_days must be at least 1' }) @Max(730, { message: 'trial_days must be at most 730' })
  trial_days?: number;

  /** A trial until then (unix seconds, in the future); not with trial_days. */
  @Optional() @UnixSeconds('trial_end')
  trial_end?: number;

  /** Complete after this many billed periods (an instalment plan); default: until cancelled. */
  @Optional() @IsInt({ message: 'billing_cycles must be an integer' }) @Min(1, { message: 'billing_cycles must be at least 1' }) @Max(1_000, { message: 'billing_cycles must be at most 1000' })
  billing_cycles?: number;

  /** `send_invoice` (default): each invoice's payment link is sent; `charge_automatically`: each invoice is charged at finalization (wallet, then the customer's default payment method). */
  @Optional() @OneOf('collection_method', COLLECTION_METHODS)
  collection_method?: string;

  @Metadata()
  metadata?: Record<string, string>;

  /** On-sale add-ons to attach from the start (at most 20, each once). */
  @Optional()
  @IsArray({ message: 'add_ons must be an array' })
  @ArrayMaxSize(ADD_ONS_MAX, { message: `add_ons may hold at most ${ADD_ONS_MAX} add-ons` })
  @ValidateNested({ each: true })
  @Type(() => SubscriptionAddonDto)
  @JSONSchema({ type: 'array', maxItems: ADD_ONS_MAX, items: { $ref: '#/components/schemas/SubscriptionAddonDto' } })
  add_ons?: SubscriptionAddonDto[];

  /** A promotion code's text (ignoring case): its coupon discounts the invoices. */
  @Optional() @PromotionCodeText()
  promotion_code?: string;
}

export class ListSubscriptionsQueryDto extends ListQueryDto {
  @Optional() @IsString() @MaxLength(ID_MAX)
  customer?: string;

  @Optional() @OneOf('status', SUBSCRIPTION_STATUS_VALUES)
  status?: string;
}

export class CancelSubscriptionDto {
  /** End at the current period's end (subscription.updated) instead of now (subscription.cancelled). */
  @Optional() @IsBoolean({ message: 'at_period_end must be a boolean' })
  at_period_end?: boolean;

  /** Ending now: credit the unused time of the period paid in advance on the final invoice (docs/api/subscriptions.md#final-invoice). */
  @Optional() @IsBoolean({ message: 'prorate must be a boolean' })
  prorate?: boolean;

  /** With prorate: refund that credit to the payer of the period's invoice instead of keeping it as balance (docs/api/subscriptions.md#refunding-the-credit). */
  @Optional() @IsBoolean({ message: 'refund must be a boolean' })
  refund?: boolean;
}

export class PauseSubscriptionDto {
  /** When the clock resumes it (unix seconds, in the subscription's future). */
  @Optional() @UnixSeconds('resume_at')
  resume_at?: number;
}

export class ExtendTrialDto {
  /** The new end of the trial (unix seconds), later than the current one. */
  @IsDefined({ message: 'trial_end is required' }) @Type(() => Number) @UnixSeconds('trial_end')
  trial_end!: number;
}

export class ChangePlanDto {
  /** The new plan (`plan_…`): active, in the same currency, sold on the current interval. */
  @Optional() @IsString({ message: 'plan must be a string' }) @MaxLength(ID_MAX)
  plan?: string;

  /** The new quantity. */
  @Optional() @Quantity()
  quantity?: number;

  /** `immediately` (default; prorated onto the next invoice) or `period_end` (a pending change). */
  @Optional() @OneOf('effective', ['immediately', 'period_end'])
  effective?: string;
}

export class ChangeBillingIntervalDto {
  /** monthly, quarterly or yearly; one the plan offers. */
  @IsDefined({ message: 'billing_interval is required' }) @CatalogValue('billing_interval', BILLING_INTERVALS)
  billing_interval!: string;
}

export class ApplyPromotionCodeDto {
  /** The code's text, matched ignoring case. */
  @IsDefined({ message: 'promotion_code is required' }) @PromotionCodeText()
  promotion_code!: string;
}

export class UpdateSubscriptionAddonDto {
  /** The new quantity. */
  @IsDefined({ message: 'quantity is required' }) @Quantity()
  quantity!: number;
}
