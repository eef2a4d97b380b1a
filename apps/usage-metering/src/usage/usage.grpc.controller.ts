import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, usageMeteringV1 } from '@recur/contracts';
import { checkPage, pageInfo, unixSeconds } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import type { UsageInput } from './usage';
import { toAlertMessage, toRecordMessage } from './usage.mapper';
import { type RecordOutcome, UsageService } from './usage.service';

const toInput = (record: usageMeteringV1.UsageRecordInput | undefined, prefix: string): UsageInput => ({
  subscriptionId: record?.subscriptionId ?? '',
  metricName: record?.metricName ?? '',
  quantity: fromInt64(record?.quantity ?? 0n, `${prefix}quantity`),
  idempotencyKey: record?.idempotencyKey ?? '',
  ...(record?.timestamp === undefined ? {} : { timestamp: fromInt64(record.timestamp, `${prefix}timestamp`) }),
});

const toResult = (outcome: RecordOutcome): MessageInitShape<typeof usageMeteringV1.UsageRecordResultSchema> =>
  outcome.error
    ? { replayed: false, error: { code: outcome.error.code, message: outcome.error.message, param: outcome.error.param ?? '', kind: outcome.error.kind } }
    : { replayed: outcome.replayed, record: toRecordMessage(outcome.record!) };

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
    const inputs = request.records.map((record, index) => toInput(record, `records[${index}].`));
    const outcomes = await this.usage.record(requireTenant(request.tenant), inputs, true);
    return { results: outcomes.map(toResult) };
  }

  @GrpcMethod('UsageMeteringService', 'ListUsageRecords')
  async listUsageRecords(request: usageMeteringV1.ListUsageRecordsRequest): Promise<MessageInitShape<typeof usageMeteringV1.ListUsageRecordsResponseSchema>> {
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { records, total } = await this.usage.list(requireTenant(request.tenant), page, {
      subscriptionId: request.subscriptionId,
      metricName: request.metricName,
      periodStart: request.periodStart === undefined ? undefined : new Date(fromInt64(request.periodStart, 'period_start') * 1000),
    });
    return { records: records.map(toRecordMessage), page: pageInfo(page, records.length, total) };
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
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { alerts, total } = await this.usage.listAlerts(requireTenant(request.tenant), page, { subscriptionId: request.subscriptionId });
    return { alerts: alerts.map(toAlertMessage), page: pageInfo(page, alerts.length, total) };
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
