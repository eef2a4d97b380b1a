import { DomainError, failedPrecondition, invalidArgument, type TenantRef } from '@recur/kernel';
import {
  METRIC_NAME_PATTERN,
  USAGE_ALERT_THRESHOLDS,
  USAGE_FUTURE_SKEW_SECONDS,
  USAGE_GRACE_SECONDS,
  USAGE_IDEMPOTENCY_KEY_PATTERN,
  USAGE_LIMIT_MAX,
  USAGE_QUANTITY_MAX,
  isUnixSeconds,
} from '@recur/vocabulary';

/** A half-open span of time [start, end). */
export interface Period {
  start: Date;
  end: Date;
}

/** A metered price component of a subscription's price snapshot, as usage-metering keeps it. */
export interface MeteredComponent {
  metricName: string;
  includedQuantity: number;
  /** The plan's limit per period; null without one. */
  usageLimit: bigint | null;
}

/** What usage-metering knows of a subscription (from the subscription service's events). */
export interface SubscriptionView {
  id: string;
  tenant: TenantRef;
  status: string;
  currentPeriod: Period;
  /** The period before the current one; null before the first renewal. */
  previousPeriod: Period | null;
  /** When usage-metering learned of the current period: the previous one's grace runs from here. */
  periodLearnedAt: Date;
  meteredComponents: MeteredComponent[];
  onTestClock: boolean;
}

/** One record as the integrator sends it; `timestamp` in unix seconds. */
export interface UsageInput {
  subscriptionId: string;
  metricName: string;
  quantity: number;
  idempotencyKey: string;
  timestamp?: number;
}

/**
 * Where a record counts: its time and its subscription period. The records of one subscription
 * sent without a timestamp in one call share one placement (a batch allocates one, not 1000).
 */
export interface Placement {
  timestampAt: Date;
  timestampGiven: boolean;
  period: Period;
}

export interface UsageRecord {
  id: string;
  tenant: TenantRef;
  subscriptionId: string;
  metricName: string;
  quantity: number;
  idempotencyKey: string;
  timestamp: Date;
  timestampGiven: boolean;
  period: Period;
  created: Date;
}

export interface UsageAlert {
  id: string;
  tenant: TenantRef;
  subscriptionId: string;
  metricName: string;
  threshold: number;
  usage: bigint;
  limit: bigint;
  period: Period;
  created: Date;
}

export type LimitSource = 'plan' | 'subscription' | 'none';

/**
 * Checks the shape of one record (the gateway's door checks the same bounds); `prefix` names
 * the record in a batch (`records[3].`). Refusals here are 400s that store nothing.
 */
export function checkUsageInput(input: UsageInput, prefix = ''): void {
  if (!input.subscriptionId || input.subscriptionId.length > 64) throw invalidArgument(`${prefix}subscription`, 'subscription must be a subscription id');
  if (!METRIC_NAME_PATTERN.test(input.metricName)) {
    throw invalidArgument(`${prefix}metric_name`, 'metric_name must be 1–100 characters: a lowercase letter, then lowercase letters, digits, _, . or -');
  }
  if (!Number.isSafeInteger(input.quantity) || input.quantity < 0 || input.quantity > USAGE_QUANTITY_MAX) {
    throw invalidArgument(`${prefix}quantity`, `quantity must be an integer from 0 to ${USAGE_QUANTITY_MAX}`);
  }
  if (!USAGE_IDEMPOTENCY_KEY_PATTERN.test(input.idempotencyKey)) {
    throw invalidArgument(`${prefix}idempotency_key`, 'idempotency_key must be 1–255 visible ASCII characters');
  }
  if (input.timestamp !== undefined && !isUnixSeconds(input.timestamp)) throw invalidArgument(`${prefix}timestamp`, 'timestamp must be a unix time in seconds');
}

export function checkUsageLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > USAGE_LIMIT_MAX) throw invalidArgument('limit', `limit must be an integer from 0 to ${USAGE_LIMIT_MAX}`);
}

/** Subscriptions that take usage: a paused, cancelled or completed one does not. */
export function checkAcceptsUsage(view: SubscriptionView): void {
  if (view.status === 'paused') throw failedPrecondition('subscription_paused', `Subscription ${view.id} is paused: it takes no usage until it resumes`);
  if (view.status === 'cancelled') throw failedPrecondition('subscription_cancelled', `Subscription ${view.id} is cancelled: it takes no usage`);
  if (view.status === 'completed') throw failedPrecondition('subscription_completed', `Subscription ${view.id} is completed: it takes no usage`);
}

export function meteredComponent(view: SubscriptionView, metricName: string, param = 'metric_name'): MeteredComponent {
  const component = view.meteredComponents.find((candidate) => candidate.metricName === metricName);
  if (!component) {
    throw new DomainError('invalid_argument', 'metric_not_metered', `The plan of subscription ${view.id} does not meter '${metricName}'`, param);
  }
  return component;
}

/** The placement of a record sent without a timestamp: the current period, dated now (kept inside it: a test clock's subscription lives in its clock's time). */
export function placementOnReceipt(view: SubscriptionView, now: Date): Placement {
  const current = view.currentPeriod;
  const dated = Math.min(Math.max(now.getTime(), current.start.getTime()), current.end.getTime() - 1000);
  return { timestampAt: new Date(Math.floor(dated / 1000) * 1000), timestampGiven: false, period: current };
}

/**
 * The period a record counts in. Without a timestamp: `onReceipt` (placementOnReceipt's, which a
 * caller placing many records of the subscription computes once). With one: the current
 * period, or the previous one until USAGE_GRACE_SECONDS after usage-metering learned of the
 * current one; never more than USAGE_FUTURE_SKEW_SECONDS ahead of now on real time.
 */
export function placeRecord(view: SubscriptionView, input: UsageInput, now: Date, prefix = '', onReceipt?: Placement): Placement {
  checkAcceptsUsage(view);
  // The param's text only for a refusal: this runs for each record of a batch.
  if (!view.meteredComponents.some((candidate) => candidate.metricName === input.metricName)) meteredComponent(view, input.metricName, `${prefix}metric_name`);
  if (input.timestamp === undefined) return onReceipt ?? placementOnReceipt(view, now);
  const current = view.currentPeriod;
  const at = new Date(input.timestamp * 1000);
  const refuse = (why: string) =>
    new DomainError('invalid_argument', 'timestamp_outside_period', `timestamp ${why}`, `${prefix}timestamp`);
  if (!view.onTestClock && input.timestamp > now.getTime() / 1000 + USAGE_FUTURE_SKEW_SECONDS) {
    throw refuse(`lies more than ${USAGE_FUTURE_SKEW_SECONDS} seconds in the future`);
  }
  if (at >= current.start && at < current.end) return { timestampAt: at, timestampGiven: true, period: current };
  if (at >= current.end) throw refuse("lies after the subscription's current period");
  const previousOpen = now.getTime() - view.periodLearnedAt.getTime() <= USAGE_GRACE_SECONDS * 1000;
  const previous = view.previousPeriod;
  if (previous && at >= previous.start && at < previous.end && previousOpen) return { timestampAt: at, timestampGiven: true, period: previous };
  throw refuse(`lies before the subscription's current period (the previous one takes records for ${USAGE_GRACE_SECONDS} seconds after it ends)`);
}

/** True when a repeat of an idempotency_key carries the body its record was stored with. */
export function sameRecord(stored: UsageRecord, input: UsageInput): boolean {
  return (
    stored.metricName === input.metricName &&
    stored.quantity === input.quantity &&
    (input.timestamp === undefined ? !stored.timestampGiven : stored.timestampGiven && stored.timestamp.getTime() === input.timestamp * 1000)
  );
}

export const idempotencyKeyReused = (key: string, param = 'idempotency_key') =>
  new DomainError('failed_precondition', 'idempotency_key_reused', `idempotency_key '${key}' already recorded usage with another body`, param);

/** A subscription's override wins over the plan's limit; without either, no alerts. */
export function effectiveLimit(component: MeteredComponent | undefined, override: bigint | undefined): { limit: bigint | null; source: LimitSource } {
  if (override !== undefined) return { limit: override, source: 'subscription' };
  if (component?.usageLimit !== undefined && component.usageLimit !== null) return { limit: component.usageLimit, source: 'plan' };
  return { limit: null, source: 'none' };
}

/**
 * The thresholds (80, 100) a total crossed going from `before` to `after`: reached means
 * usage × 100 ≥ limit × threshold. A limit of 0 is reached by the first positive usage.
 */
export function crossedThresholds(before: bigint, after: bigint, limit: bigint): number[] {
  // In bigint: a total of 10^15 × 100 is beyond a double's exact integers.
  const reached = (total: bigint, threshold: number) => total * 100n >= limit * BigInt(threshold) && total > 0n;
  return USAGE_ALERT_THRESHOLDS.filter((threshold) => !reached(before, threshold) && reached(after, threshold));
}
