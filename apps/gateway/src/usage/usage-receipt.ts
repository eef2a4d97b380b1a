import type { MessageInitShape } from '@bufbuild/protobuf';
import type { UsageRecordJson, usageMeteringV1 } from '@recur/contracts';
import type { RecordUsageDto } from './usage.dto';

/** Records as parallel lists (usage-metering's `UsageRecordColumns`): no message per record. */
export function toColumns(records: RecordUsageDto[]): MessageInitShape<typeof usageMeteringV1.UsageRecordColumnsSchema> {
  const columns = { subscriptionIds: [] as string[], metricNames: [] as string[], quantities: [] as bigint[], idempotencyKeys: [] as string[], timestamps: [] as bigint[] };
  for (const record of records) {
    columns.subscriptionIds.push(record.subscription);
    columns.metricNames.push(record.metric_name);
    columns.quantities.push(BigInt(record.quantity));
    columns.idempotencyKeys.push(record.idempotency_key);
    // 0: none given (a given timestamp is at least 1).
    columns.timestamps.push(record.timestamp === undefined ? 0n : BigInt(record.timestamp));
  }
  return columns;
}

/** The refusals of a brief receipt, by the record's position. */
export const refusalsOf = (receipt: usageMeteringV1.UsageBatchReceipt): Map<number, usageMeteringV1.UsageRecordError> =>
  new Map(receipt.refusals.map((refusal) => [refusal.index, refusal.error!]));

/**
 * A stored or replayed record from usage-metering's brief receipt and the record as sent: it has
 * the subscription, metric, quantity and key the caller sent (a replay's body must match its
 * original's), so only ids, times and refusals cross the wire (docs/performance.md).
 */
export const receiptRecord = (livemode: boolean, sent: RecordUsageDto, receipt: usageMeteringV1.UsageBatchReceipt, index: number): UsageRecordJson => ({
  id: receipt.ids[index],
  object: 'usage_record',
  livemode,
  subscription: sent.subscription,
  metric_name: sent.metric_name,
  quantity: sent.quantity,
  idempotency_key: sent.idempotency_key,
  timestamp: Number(receipt.timestamps[index]),
  period: { start: Number(receipt.periodStarts[index]), end: Number(receipt.periodEnds[index]) },
  created: Number(receipt.created[index]),
});
