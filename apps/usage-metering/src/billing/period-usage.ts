import { invalidArgument, type TenantRef } from '@recur/kernel';
import { METRIC_NAME_PATTERN } from '@recur/vocabulary';
import type { Period } from '../usage/usage';

/** The most queries one GetPeriodUsage call takes (a billing clock batch is far smaller). */
export const PERIOD_USAGE_QUERIES_MAX = 500;

/** One subscription period whose usage an invoice bills (or a preview shows). */
export interface PeriodUsageQuery {
  tenant: TenantRef;
  subscriptionId: string;
  period: Period;
  metricNames: string[];
  /** The invoice's billing clock step; null for a preview (nothing recorded). */
  billingKey: string | null;
  /**
   * The interval the period ran on, an opaque label to usage-metering: recorded with the billing
   * and answered on the period's lines (late ones too), so the invoice prices them on that
   * interval's included quantity (docs/api/usage.md#a-billing-interval-change). Null: not given.
   */
  billingInterval: string | null;
}

/** Usage of one metric in one period that an invoice bills now. */
export interface PeriodUsageLine {
  metricName: string;
  period: Period;
  quantity: bigint;
  billedBefore: bigint;
  late: boolean;
  /** The interval the period ran on, as the query gave it (late lines: as its first billing recorded it); null: unknown. */
  billingInterval: string | null;
}

/** What earlier invoices billed of one metric in one period (the sum of its usage_billings rows). */
export interface BilledUsage {
  metricName: string;
  period: Period;
  billed: bigint;
  /** The interval its billings recorded; null before billings recorded one. */
  billingInterval: string | null;
}

export function checkPeriodUsageQuery(query: PeriodUsageQuery, index: number): void {
  const prefix = `queries[${index}].`;
  if (!query.subscriptionId) throw invalidArgument(`${prefix}subscription_id`, 'subscription_id is required');
  if (!(query.period.end.getTime() > query.period.start.getTime())) throw invalidArgument(`${prefix}period_end`, 'period_end must be after period_start');
  if (query.billingInterval !== null && !BILLING_INTERVAL_LABEL.test(query.billingInterval)) throw invalidArgument(`${prefix}billing_interval`, 'billing_interval must be a lowercase interval name');
  for (const metricName of query.metricNames) {
    if (!METRIC_NAME_PATTERN.test(metricName)) throw invalidArgument(`${prefix}metric_names`, `'${metricName}' is not a metric name`);
  }
}

/** An interval's name as the subscription service sends it (monthly, quarterly, yearly). */
const BILLING_INTERVAL_LABEL = /^[a-z_]{1,32}$/;

const key = (metricName: string, start: Date) => `${metricName} ${start.getTime()}`;

/**
 * The late-records rule (docs/api/usage.md): an invoice bills its period's total of each metric
 * (less anything billed of it before), then, for every earlier period an invoice already
 * billed, whatever its total grew by since — records accepted in the grace window after that
 * invoice. A unit counts in exactly one total and each billing takes only total − billed, so
 * every unit is billed once: on the first invoice whose billing saw it.
 */
export function usageToBill(query: PeriodUsageQuery, billed: BilledUsage[], totals: Map<string, bigint>): PeriodUsageLine[] {
  const billedOf = new Map(billed.map((entry) => [key(entry.metricName, entry.period.start), entry]));
  const closed = [...new Set(query.metricNames)].sort().map((metricName): PeriodUsageLine => {
    const billedBefore = billedOf.get(key(metricName, query.period.start))?.billed ?? 0n;
    const total = totals.get(key(metricName, query.period.start)) ?? 0n;
    return { metricName, period: query.period, quantity: total > billedBefore ? total - billedBefore : 0n, billedBefore, late: false, billingInterval: query.billingInterval };
  });
  const late = billed
    .filter((entry) => entry.period.start.getTime() < query.period.start.getTime())
    .flatMap((entry): PeriodUsageLine[] => {
      const total = totals.get(key(entry.metricName, entry.period.start)) ?? 0n;
      return total > entry.billed
        ? [{ metricName: entry.metricName, period: entry.period, quantity: total - entry.billed, billedBefore: entry.billed, late: true, billingInterval: entry.billingInterval }]
        : [];
    })
    .sort((a, b) => a.period.start.getTime() - b.period.start.getTime() || a.metricName.localeCompare(b.metricName));
  return [...closed, ...late];
}

/** The totals usageToBill reads: the query's period and every period billed before. */
export const totalsKey = key;
