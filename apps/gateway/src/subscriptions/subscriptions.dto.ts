import { SUBSCRIPTION_STATUS_VALUES } from '@recur/contracts';
import { BILLING_INTERVALS } from '@recur/pricing';
import { UNIX_SECONDS_MAX, UNIX_SECONDS_MIN } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { IsBoolean, IsDefined, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Metadata, OneOf } from '../plans/plans.dto';
import { Optional } from '../http/optional';

const ID_MAX = 100;
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
  @IsDefined({ message: 'billing_interval is required' }) @OneOf('billing_interval', BILLING_INTERVALS)
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

  @Metadata()
  metadata?: Record<string, string>;
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
