import { fromInt64 } from '@recur/money';
import type { GetUsageSummaryResponse } from '../gen/recur/usage_metering/v1/usage_metering_service_pb';
import type { UsageAlert, UsageLimit, UsageRecord } from '../gen/recur/usage_metering/v1/usage_pb';
import type { PeriodJson } from './invoice';

/** The public JSON of a usage record: what `/v1/usage` answers. Times are unix seconds. */
export interface UsageRecordJson {
  id: string;
  object: 'usage_record';
  livemode: boolean;
  subscription: string;
  metric_name: string;
  quantity: number;
  idempotency_key: string;
  timestamp: number;
  period: PeriodJson;
  created: number;
}

/** A threshold alert: what `/v1/usage/alerts` lists and `usage.threshold_reached` carries in `data.object`. */
export interface UsageAlertJson {
  id: string;
  object: 'usage_alert';
  livemode: boolean;
  subscription: string;
  metric_name: string;
  threshold: number;
  usage: number;
  limit: number;
  period: PeriodJson;
  created: number;
}

export interface MetricUsageJson {
  metric_name: string;
  total: number;
  limit: number | null;
  limit_source: string;
  included_quantity: number;
}

/** A subscription period's totals per metric (`GET /v1/usage/summary`). */
export interface UsageSummaryJson {
  object: 'usage_summary';
  livemode: boolean;
  subscription: string;
  period: PeriodJson;
  metrics: MetricUsageJson[];
}

/** A subscription's own limit of a metric (`POST /v1/usage/limits`). */
export interface UsageLimitJson {
  object: 'usage_limit';
  livemode: boolean;
  subscription: string;
  metric_name: string;
  limit: number | null;
  updated: number;
}

const period = (start: bigint, end: bigint): PeriodJson => ({ start: Number(start), end: Number(end) });

export function presentUsageRecord(record: UsageRecord): UsageRecordJson {
  return {
    id: record.id,
    object: 'usage_record',
    livemode: record.livemode,
    subscription: record.subscriptionId,
    metric_name: record.metricName,
    quantity: fromInt64(record.quantity, 'quantity'),
    idempotency_key: record.idempotencyKey,
    timestamp: Number(record.timestamp),
    period: period(record.periodStart, record.periodEnd),
    created: Number(record.created),
  };
}

export function presentUsageAlert(alert: UsageAlert): UsageAlertJson {
  return {
    id: alert.id,
    object: 'usage_alert',
    livemode: alert.livemode,
    subscription: alert.subscriptionId,
    metric_name: alert.metricName,
    threshold: alert.threshold,
    usage: fromInt64(alert.usage, 'usage'),
    limit: fromInt64(alert.limit, 'limit'),
    period: period(alert.periodStart, alert.periodEnd),
    created: Number(alert.created),
  };
}

export function presentUsageSummary(summary: GetUsageSummaryResponse): UsageSummaryJson {
  return {
    object: 'usage_summary',
    livemode: summary.livemode,
    subscription: summary.subscriptionId,
    period: period(summary.periodStart, summary.periodEnd),
    metrics: summary.metrics.map((metric) => ({
      metric_name: metric.metricName,
      total: fromInt64(metric.total, 'total'),
      limit: metric.limit === undefined ? null : fromInt64(metric.limit, 'limit'),
      limit_source: metric.limitSource,
      included_quantity: fromInt64(metric.includedQuantity, 'included_quantity'),
    })),
  };
}

export function presentUsageLimit(limit: UsageLimit): UsageLimitJson {
  return {
    object: 'usage_limit',
    livemode: limit.livemode,
    subscription: limit.subscriptionId,
    metric_name: limit.metricName,
    limit: limit.limit === undefined ? null : fromInt64(limit.limit, 'limit'),
    updated: Number(limit.updated),
  };
}
