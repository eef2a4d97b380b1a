import { COUPON_DURATIONS, COUPON_PERIODS_MAX } from '@recur/vocabulary';
import { COUPON_TYPES } from '@recur/pricing';
import { IsDefined, IsInt, IsNumber, Max, Min } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { CatalogValue, Currency, Metadata, Name } from '../plans/plans.dto';
import { Nullable, Optional } from '../http/optional';

const Periods = () => (target: object, key: string | symbol) => {
  IsInt({ message: 'duration_in_periods must be an integer' })(target, key);
  Min(1, { message: `duration_in_periods must be between 1 and ${COUPON_PERIODS_MAX}` })(target, key);
  Max(COUPON_PERIODS_MAX, { message: `duration_in_periods must be between 1 and ${COUPON_PERIODS_MAX}` })(target, key);
};

export class CreateCouponDto {
  @Name()
  name!: string;

  /** percentage or fixed_amount. */
  @IsDefined() @CatalogValue('type', COUPON_TYPES)
  type!: string;

  /** percentage: greater than 0, at most 100, two decimals at most; fixed_amount: a positive integer in minor units. */
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'value must be a number' })
  value!: number;

  /** Required for fixed_amount, not allowed for percentage. */
  @Optional() @Currency()
  currency?: string;

  /** once, repeating or forever. */
  @IsDefined() @CatalogValue('duration', COUPON_DURATIONS)
  duration!: string;

  /** Required for repeating (1 to 120 billing periods), not allowed otherwise. */
  @Optional() @Periods()
  duration_in_periods?: number;

  @Metadata()
  metadata?: Record<string, string>;
}

/** Before the first redemption every field may change; afterwards only name and metadata. */
export class UpdateCouponDto {
  @Optional() @Name()
  name?: string;

  @Optional() @CatalogValue('type', COUPON_TYPES)
  type?: string;

  @Optional() @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'value must be a number' })
  value?: number;

  /** null removes it. */
  @Nullable('string') @Currency()
  currency?: string | null;

  @Optional() @CatalogValue('duration', COUPON_DURATIONS)
  duration?: string;

  /** null removes it. */
  @Nullable('integer') @Periods()
  duration_in_periods?: number | null;

  @Metadata()
  metadata?: Record<string, string>;
}

export class ListCouponsQueryDto extends ListQueryDto {}
