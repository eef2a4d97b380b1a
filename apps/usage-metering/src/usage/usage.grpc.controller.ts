import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, usageMeteringV1 } from '@recur/contracts';
import { checkListPage, type DomainError, invalidArgument, unixSeconds } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import type { UsageInput } from './usage';
import { toAlertMessage, toRecordMessage } from './usage.mapper';
import { type RecordOutcome, UsageService } from './usage.service';

function toInput(record: usageMeteringV1.UsageRecordInput | undefined, prefix: string): UsageInput {
  const input: UsageInput = {
    subscriptionId: record?.subscriptionId ?? '',
    metricName: record?.metricName ?? '',
    quantity: fromInt64(record?.quantity ?? 0n, `${prefix}quantity`),
    idempotencyKey: record?.idempotencyKey ?? '',
  };
  if (record?.timestamp !== undefined) input.timestamp = fromInt64(record.timestamp, `${prefix}timestamp`);
  return input;
}

/**
 * A batch sent as parallel lists. Quantities and timestamps become numbers as they are (a value
 * beyond the safe integers is beyond the bounds too): the service's check refuses them by param.
 */
function columnInputs(columns: usageMeteringV1.UsageRecordColumns): UsageInput[] {
  const { subscriptionIds, metricNames, quantities, idempotencyKeys, timestamps } = columns;
  const count = subscriptionIds.length;
  if ([metricNames, quantities, idempotencyKeys, timestamps].some((list) => list.length !== count)) throw invalidArgument('records', 'columns must all hold one entry per record');
  const inputs = new Array<UsageInput>(count);
  for (let index = 0; index < count; index++) {
    inputs[index] = { subscriptionId: subscriptionIds[index], metricName: metricNames[index], quantity: Number(quantities[index]), idempotencyKey: idempotencyKeys[index] };
    if (timestamps[index] !== 0n) inputs[index].timestamp = Number(timestamps[index]);
  }
  return inputs;
}

const toError = (error: DomainError): MessageInitShape<typeof usageMeteringV1.UsageRecordErrorSchema> => ({ code: error.code, message: error.message, param: error.param ?? '', kind: error.kind });

const toResult = (outcome: RecordOutcome): MessageInitShape<typeof usageMeteringV1.UsageRecordResultSchema> =>
  outcome.error ? { replayed: false, error: toError(outcome.error) } : { replayed: outcome.replayed, record: toRecordMessage(outcome.record!) };

/**
 * A brief batch answer: per record what the caller did not send, as parallel lists (no message
 * per record). The records of one call share their period and creation time (and, without a
 * timestamp, their time), so each distinct time is converted once.
 */
function toReceipt(outcomes: RecordOutcome[]): MessageInitShape<typeof usageMeteringV1.UsageBatchReceiptSchema> {
  const seconds = new Map<Date, bigint>();
  const secondsOf = (date: Date): bigint => {
    let value = seconds.get(date);
    if (value === undefined) seconds.set(date, (value = BigInt(unixSeconds(date))));
    return value;
  };
  const receipt = {
    ids: [] as string[], replayed: [] as boolean[], timestamps: [] as bigint[], periodStarts: [] as bigint[], periodEnds: [] as bigint[], created: [] as bigint[],
    refusals: [] as MessageInitShape<typeof usageMeteringV1.UsageRecordRefusalSchema>[],
  };
  outcomes.forEach((outcome, index) => {
    const record = outcome.record;
    receipt.ids.push(record?.id ?? '');
    receipt.replayed.push(outcome.replayed);
    receipt.timestamps.push(record ? secondsOf(record.timestamp) : 0n);
    receipt.periodStarts.push(record ? secondsOf(record.period.start) : 0n);
    receipt.periodEnds.push(record ? secondsOf(record.period.end) : 0n);
    receipt.created.push(record ? secondsOf(record.created) : 0n);
    if (outcome.error) receipt.refusals.push({ index, error: toError(outcome.error) });
  });
  return receipt;
}

/** gRPC edge of the usage use cases: decode, call, encode. No rules live here. */
@Controller()
export class UsageGrpcController {
  constructor(private readonly usage: UsageService) {}

  @GrpcMethod('UsageMeteringService', 'RecordUsage')
  async recordUsage(request: usageMeteringV1.RecordUsageRequest): Promise<MessageInitShape<typeof usageMeteringV1.RecordUsageResponseSchema>> {
    const [outcome] = await this.usage.record(requireTenant(request.tenant), [toInput(request.record, '')], false);
    if (outcome.error) throw outcome.error;
    return { record: toRecordMessage(outcome.record!), replayed: outcome.replayed };
  }

  @GrpcMethod('UsageMeteringService', 'RecordUsageBatch')
  async recordUsageBatch(request: usageMeteringV1.RecordUsageBatchRequest): Promise<MessageInitShape<typeof usageMeteringV1.RecordUsageBatchResponseSchema>> {
    if (request.columns && request.records.length > 0) throw invalidArgument('records', 'a batch carries records or columns, not both');
    const inputs = request.columns ? columnInputs(request.columns) : request.records.map((record, index) => toInput(record, `records[${index}].`));
    const outcomes = await this.usage.record(requireTenant(request.tenant), inputs, true);
    return request.brief ? { receipt: toReceipt(outcomes) } : { results: outcomes.map(toResult) };
  }

  @GrpcMethod('UsageMeteringService', 'ListUsageRecords')
  async listUsageRecords(request: usageMeteringV1.ListUsageRecordsRequest): Promise<MessageInitShape<typeof usageMeteringV1.ListUsageRecordsResponseSchema>> {
    const page = checkListPage(request.page);
    const { records, page: info } = await this.usage.list(requireTenant(request.tenant), page, {
      subscriptionId: request.subscriptionId,
      metricName: request.metricName,
      periodStart: request.periodStart === undefined ? undefined : new Date(fromInt64(request.periodStart, 'period_start') * 1000),
    });
    return { records: records.map(toRecordMessage), page: info };
  }

  @GrpcMethod('UsageMeteringService', 'GetUsageSummary')
  async getUsageSummary(request: usageMeteringV1.GetUsageSummaryRequest): Promise<MessageInitShape<typeof usageMeteringV1.GetUsageSummaryResponseSchema>> {
    const periodStart = request.periodStart === undefined ? undefined : new Date(fromInt64(request.periodStart, 'period_start') * 1000);
    const summary = await this.usage.summary(requireTenant(request.tenant), request.subscriptionId, periodStart);
    return {
      subscriptionId: summary.subscription.id,
      livemode: summary.subscription.tenant.livemode,
      periodStart: BigInt(unixSeconds(summary.period.start)),
      periodEnd: BigInt(unixSeconds(summary.period.end)),
      metrics: summary.metrics.map((metric) => ({
        metricName: metric.metricName,
        total: metric.total,
        ...(metric.limit === null ? {} : { limit: metric.limit }),
        limitSource: metric.limitSource,
        includedQuantity: BigInt(metric.includedQuantity),
      })),
    };
  }

  @GrpcMethod('UsageMeteringService', 'ListUsageAlerts')
  async listUsageAlerts(request: usageMeteringV1.ListUsageAlertsRequest): Promise<MessageInitShape<typeof usageMeteringV1.ListUsageAlertsResponseSchema>> {
    const page = checkListPage(request.page);
    const { alerts, page: info } = await this.usage.listAlerts(requireTenant(request.tenant), page, { subscriptionId: request.subscriptionId });
    return { alerts: alerts.map(toAlertMessage), page: info };
  }

  @GrpcMethod('UsageMeteringService', 'SetUsageLimit')
  async setUsageLimit(request: usageMeteringV1.SetUsageLimitRequest): Promise<MessageInitShape<typeof usageMeteringV1.SetUsageLimitResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const limit = request.limit === undefined ? undefined : fromInt64(request.limit, 'limit');
    const stored = await this.usage.setLimit(tenant, request.subscriptionId, request.metricName, limit);
    return {
      limit: {
        subscriptionId: request.subscriptionId,
        livemode: tenant.livemode,
        metricName: request.metricName,
        ...(stored.limit === undefined ? {} : { limit: stored.limit }),
        updated: BigInt(unixSeconds(stored.updated)),
      },
    };
  }
}
