import { AMOUNT_MAX, COUPON_DURATIONS, COUPON_PERIODS_MAX, type CouponDuration, isPercent, PERCENT_MAX, PERCENT_MIN } from '@recur/vocabulary';
import { checkMetadata, failedPrecondition, invalidArgument, mergeMetadata, type Metadata, newId, type TenantRef } from '@recur/kernel';
import { COUPON_TYPES, type CouponType } from '@recur/pricing';
import { checkCurrency, checkName, checkOneOf } from '../common/fields';

/**
 * A coupon as the domain sees it. `percentage`: value in (0, 100] with at most two
 * decimals, no currency. `fixed_amount`: value a positive integer amount in minor units
 * of `currency`. `repeating` needs duration_in_periods (1..120); `once` and `forever` refuse it.
 */
export interface Coupon {
  id: string;
  tenant: TenantRef;
  name: string;
  type: CouponType;
  value: number;
  currency: string | null;
  duration: CouponDuration;
  durationInPeriods: number | null;
  timesRedeemed: number;
  metadata: Metadata;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

export interface CouponFields {
  name?: string;
  type?: string;
  value?: number;
  /** `''` removes it (PATCH). */
  currency?: string;
  duration?: string;
  /** 0 removes it (PATCH). */
  durationInPeriods?: number;
  metadata?: Metadata;
}

/** The fields that make a coupon's terms; once redeemed they are frozen (409 coupon_redeemed). */
const TERMS = ['type', 'value', 'currency', 'duration', 'durationInPeriods'] as const;

function checkTerms(coupon: Coupon): Coupon {
  if (coupon.type === 'percentage') {
    if (!isPercent(coupon.value)) {
      throw invalidArgument('value', `a percentage value must be between ${PERCENT_MIN} and ${PERCENT_MAX}, with at most two decimals`);
    }
    if (coupon.currency !== null) throw invalidArgument('currency', 'a percentage coupon has no currency');
  } else {
    if (!Number.isSafeInteger(coupon.value) || coupon.value < 1 || coupon.value > AMOUNT_MAX) {
      throw invalidArgument('value', `a fixed_amount value must be an integer between 1 and ${AMOUNT_MAX} (minor units)`);
    }
    if (coupon.currency === null) throw invalidArgument('currency', 'a fixed_amount coupon needs a currency', 'parameter_missing');
  }
  if (coupon.duration === 'repeating') {
    if (coupon.durationInPeriods === null) throw invalidArgument('duration_in_periods', 'a repeating coupon needs duration_in_periods', 'parameter_missing');
    if (!Number.isSafeInteger(coupon.durationInPeriods) || coupon.durationInPeriods < 1 || coupon.durationInPeriods > COUPON_PERIODS_MAX) {
      throw invalidArgument('duration_in_periods', `duration_in_periods must be an integer between 1 and ${COUPON_PERIODS_MAX}`);
    }
  } else if (coupon.durationInPeriods !== null) {
    throw invalidArgument('duration_in_periods', 'duration_in_periods applies to repeating coupons only');
  }
  return coupon;
}

export function createCoupon(tenant: TenantRef, fields: CouponFields & { name: string; type: string; value: number; duration: string }, now: Date): Coupon {
  const type = checkOneOf(fields.type, COUPON_TYPES, 'type');
  return checkTerms({
    id: newId('coupon'),
    tenant,
    name: checkName(fields.name),
    type,
    value: fields.value,
    currency: fields.currency === undefined || fields.currency === '' ? null : checkCurrency(fields.currency),
    duration: checkOneOf(fields.duration, COUPON_DURATIONS, 'duration'),
    durationInPeriods: fields.durationInPeriods === undefined || fields.durationInPeriods === 0 ? null : fields.durationInPeriods,
    timesRedeemed: 0,
    metadata: checkMetadata(fields.metadata ?? {}),
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  });
}

/**
 * Before its first redemption every field may change; afterwards only name and metadata
 * (subscriptions keep the terms they were sold). Switching to `percentage` drops the
 * currency, and leaving `repeating` drops duration_in_periods, unless given.
 */
export function updateCoupon(coupon: Coupon, fields: CouponFields, now: Date): Coupon {
  if (coupon.timesRedeemed > 0 && TERMS.some((field) => fields[field] !== undefined)) {
    throw failedPrecondition('coupon_redeemed', `Coupon '${coupon.id}' has been redeemed: only its name and metadata can change.`);
  }
  const type = fields.type === undefined ? coupon.type : checkOneOf(fields.type, COUPON_TYPES, 'type');
  const duration = fields.duration === undefined ? coupon.duration : checkOneOf(fields.duration, COUPON_DURATIONS, 'duration');
  let currency = fields.currency === undefined ? coupon.currency : fields.currency === '' ? null : checkCurrency(fields.currency);
  if (fields.currency === undefined && type === 'percentage') currency = null;
  let durationInPeriods = fields.durationInPeriods === undefined ? coupon.durationInPeriods : fields.durationInPeriods === 0 ? null : fields.durationInPeriods;
  if (fields.durationInPeriods === undefined && duration !== 'repeating') durationInPeriods = null;
  return checkTerms({
    ...coupon,
    name: fields.name === undefined ? coupon.name : checkName(fields.name),
    type,
    value: fields.value ?? coupon.value,
    currency,
    duration,
    durationInPeriods,
    metadata: fields.metadata === undefined ? coupon.metadata : checkMetadata(mergeMetadata(coupon.metadata, fields.metadata)),
    updatedAt: now,
  });
}

export function deleteCoupon(coupon: Coupon, now: Date): Coupon {
  return { ...coupon, deletedAt: now, updatedAt: now };
}
