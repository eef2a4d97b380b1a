import { create } from '@bufbuild/protobuf';
import { usageV1 } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import type { UsageAlert, UsageRecord } from './usage';

/** A usage_records row as `pg` reads it (bigint columns arrive as text). */
export interface RecordRow {
  id: string;
  account_id: string;
  livemode: boolean;
  subscription_id: string;
  metric_name: string;
  quantity: string;
  idempotency_key: string;
  timestamp: Date;
  timestamp_given: boolean;
  period_start: Date;
  period_end: Date;
  created_at: Date;
}

export interface AlertRow {
  id: string;
  account_id: string;
  livemode: boolean;
  subscription_id: string;
  metric_name: string;
  threshold: number;
  usage: string;
  limit: string;
  period_start: Date;
  period_end: Date;
  created_at: Date;
}

export const fromRecordRow = (row: RecordRow): UsageRecord => ({
  id: row.id,
  tenant: { accountId: row.account_id, livemode: row.livemode },
  subscriptionId: row.subscription_id,
  metricName: row.metric_name,
  quantity: Number(row.quantity),
  idempotencyKey: row.idempotency_key,
  timestamp: row.timestamp,
  timestampGiven: row.timestamp_given,
  period: { start: row.period_start, end: row.period_end },
  created: row.created_at,
});

export const fromAlertRow = (row: AlertRow): UsageAlert => ({
  id: row.id,
  tenant: { accountId: row.account_id, livemode: row.livemode },
  subscriptionId: row.subscription_id,
  metricName: row.metric_name,
  threshold: row.threshold,
  usage: BigInt(row.usage),
  limit: BigInt(row.limit),
  period: { start: row.period_start, end: row.period_end },
  created: row.created_at,
});

const seconds = (date: Date): bigint => BigInt(unixSeconds(date));

export const toRecordMessage = (record: UsageRecord): usageV1.UsageRecord =>
  create(usageV1.UsageRecordSchema, {
    id: record.id,
    livemode: record.tenant.livemode,
    subscriptionId: record.subscriptionId,
    metricName: record.metricName,
    quantity: BigInt(record.quantity),
    idempotencyKey: record.idempotencyKey,
    timestamp: seconds(record.timestamp),
    periodStart: seconds(record.period.start),
    periodEnd: seconds(record.period.end),
    created: seconds(record.created),
  });

export const toAlertMessage = (alert: UsageAlert): usageV1.UsageAlert =>
  create(usageV1.UsageAlertSchema, {
    id: alert.id,
    livemode: alert.tenant.livemode,
    subscriptionId: alert.subscriptionId,
    metricName: alert.metricName,
    threshold: alert.threshold,
    usage: alert.usage,
    limit: alert.limit,
    periodStart: seconds(alert.period.start),
    periodEnd: seconds(alert.period.end),
    created: seconds(alert.created),
  });
