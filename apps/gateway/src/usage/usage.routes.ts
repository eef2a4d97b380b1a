import { type usageMeteringV1, presentUsageAlert, presentUsageLimit, presentUsageRecord, presentUsageSummary, type UsageAlertJson, type UsageLimitJson, type UsageRecordJson, type UsageSummaryJson } from '@recur/contracts';
import { listEnvelope, pageRequest } from '../http/list';
import { defineRoutes, listRoute, responseSchema, route } from '../routing/define-routes';
import type { ServiceClients } from '../infrastructure/service-clients';
import { ListUsageAlertsQueryDto, ListUsageQueryDto, RecordUsageBatchDto, RecordUsageDto, SetUsageLimitDto, UsageSummaryQueryDto } from './usage.dto';
import { receiptRecord, refusalsOf, toColumns } from './usage-receipt';
import { UsageRecordCoalescer } from './usage-record-coalescer';
import { validRecordUsageBatchBody, validRecordUsageBody } from './usage.validation';

const period = { type: 'object', required: ['start', 'end'], properties: { start: { type: 'integer' }, end: { type: 'integer' } }, description: 'The subscription period, unix seconds [start, end).' };

export const USAGE_RECORD_SCHEMA = responseSchema<UsageRecordJson>('UsageRecord', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'subscription', 'metric_name', 'quantity', 'idempotency_key', 'timestamp', 'period', 'created'],
  properties: {
    id: { type: 'string', example: 'ur_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['usage_record'] },
    livemode: { type: 'boolean' },
    subscription: { type: 'string' },
    metric_name: { type: 'string', example: 'api_calls' },
    quantity: { type: 'integer' },
    idempotency_key: { type: 'string' },
    timestamp: { type: 'integer', description: 'When the usage happened, unix seconds.' },
    period,
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

export const USAGE_ALERT_SCHEMA = responseSchema<UsageAlertJson>('UsageAlert', {
  type: 'object',
  required: ['id', 'object', 'livemode', 'subscription', 'metric_name', 'threshold', 'usage', 'limit', 'period', 'created'],
  properties: {
    id: { type: 'string', example: 'ualert_4f9XkQ2mZ8aBcD1eF3gH5jKl' },
    object: { type: 'string', enum: ['usage_alert'] },
    livemode: { type: 'boolean' },
    subscription: { type: 'string' },
    metric_name: { type: 'string' },
    threshold: { type: 'integer', enum: [80, 100], description: 'The percentage of the limit reached.' },
    usage: { type: 'integer', description: "The period's total when the threshold was crossed." },
    limit: { type: 'integer' },
    period,
    created: { type: 'integer', description: 'Unix seconds.' },
  },
});

export const USAGE_SUMMARY_SCHEMA = responseSchema<UsageSummaryJson>('UsageSummary', {
  type: 'object',
  required: ['object', 'livemode', 'subscription', 'period', 'metrics'],
  properties: {
    object: { type: 'string', enum: ['usage_summary'] },
    livemode: { type: 'boolean' },
    subscription: { type: 'string' },
    period,
    metrics: {
      type: 'array',
      items: {
        type: 'object',
        required: ['metric_name', 'total', 'limit', 'limit_source', 'included_quantity'],
        properties: {
          metric_name: { type: 'string' },
          total: { type: 'integer' },
          limit: { type: ['integer', 'null'], description: 'The limit per period; null without one.' },
          limit_source: { type: 'string', enum: ['plan', 'subscription', 'none'] },
          included_quantity: { type: 'integer', description: "The plan's monthly free quantity of the metric." },
        },
      },
    },
  },
});

export const USAGE_LIMIT_SCHEMA = responseSchema<UsageLimitJson>('UsageLimit', {
  type: 'object',
  required: ['object', 'livemode', 'subscription', 'metric_name', 'limit', 'updated'],
  properties: {
    object: { type: 'string', enum: ['usage_limit'] },
    livemode: { type: 'boolean' },
    subscription: { type: 'string' },
    metric_name: { type: 'string' },
    limit: { type: ['integer', 'null'], description: "The subscription's own limit per period; null: the plan's applies." },
    updated: { type: 'integer', description: 'Unix seconds.' },
  },
});

/** One record's outcome in a batch, in the request's order. */
export interface UsageBatchResultJson {
  status: 'created' | 'replayed' | 'refused';
  record: UsageRecordJson | null;
  error: { code: string; message: string; param: string | null } | null;
}

export interface UsageBatchJson {
  object: 'usage_batch';
  data: UsageBatchResultJson[];
}

export const USAGE_BATCH_SCHEMA = responseSchema<UsageBatchJson>('UsageBatch', {
  type: 'object',
  required: ['object', 'data'],
  properties: {
    object: { type: 'string', enum: ['usage_batch'] },
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['status', 'record', 'error'],
        properties: {
          status: { type: 'string', enum: ['created', 'replayed', 'refused'] },
          record: { oneOf: [{ $ref: '#/components/schemas/UsageRecord' }, { type: 'null' }] },
          error: {
            type: ['object', 'null'],
            required: ['code', 'message', 'param'],
            properties: { code: { type: 'string' }, message: { type: 'string' }, param: { type: ['string', 'null'] } },
          },
        },
      },
    },
  },
});

/** The batch's results, in the request's order, from usage-metering's brief receipt and the records as sent. */
function presentBatchReceipt(livemode: boolean, records: RecordUsageDto[], receipt: usageMeteringV1.UsageBatchReceipt): UsageBatchResultJson[] {
  const refusals = refusalsOf(receipt);
  return records.map((sent, index): UsageBatchResultJson => {
    const error = refusals.get(index);
    if (error) return { status: 'refused', record: null, error: { code: error.code, message: error.message, param: error.param || null } };
    return { status: receipt.replayed[index] ? 'replayed' : 'created', record: receiptRecord(livemode, sent, receipt, index), error: null };
  });
}

/** The gateway's one coalescer of single records (routes are plain functions: it hangs off the gateway's gRPC clients). */
const coalescers = new WeakMap<ServiceClients, UsageRecordCoalescer>();
function coalescerOf(services: ServiceClients): UsageRecordCoalescer {
  let coalescer = coalescers.get(services);
  if (!coalescer) {
    coalescer = new UsageRecordCoalescer(services.usageMetering);
    coalescers.set(services, coalescer);
  }
  return coalescer;
}

/** `/v1/usage` → UsageMeteringService. Validation happened before; rules live in the service. */
export const USAGE_ROUTES = defineRoutes('Usage', [
  route({
    method: 'POST', path: '/v1/usage', summary: 'Record usage', body: RecordUsageDto, validBody: validRecordUsageBody, response: USAGE_RECORD_SCHEMA, status: 201,
    handler: async ({ services, tenant, body }) => (await coalescerOf(services).record(tenant, body)).record,
  }),
  route({
    method: 'POST', path: '/v1/usage/batch', summary: 'Record up to 1000 usage records', body: RecordUsageBatchDto, validBody: validRecordUsageBatchBody, response: USAGE_BATCH_SCHEMA,
    handler: async ({ services, tenant, body }) => {
      const { receipt } = await services.usageMetering.recordUsageBatch({ tenant, columns: toColumns(body.records), brief: true });
      return { object: 'usage_batch', data: presentBatchReceipt(tenant.livemode, body.records, receipt!) };
    },
  }),
  listRoute({
    method: 'GET', path: '/v1/usage', summary: "List a subscription's usage", query: ListUsageQueryDto, response: USAGE_RECORD_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { records, page } = await services.usageMetering.listUsageRecords({
        tenant,
        page: pageRequest(query),
        subscriptionId: query.subscription,
        metricName: query.metric_name,
        ...(query.period_start === undefined ? {} : { periodStart: BigInt(query.period_start) }),
      });
      return listEnvelope('/v1/usage', records.map(presentUsageRecord), query, page);
    },
  }),
  route({
    method: 'GET', path: '/v1/usage/summary', summary: "A subscription period's totals per metric", query: UsageSummaryQueryDto, response: USAGE_SUMMARY_SCHEMA,
    handler: async ({ services, tenant, query }) =>
      presentUsageSummary(
        await services.usageMetering.getUsageSummary({ tenant, subscriptionId: query.subscription, ...(query.period_start === undefined ? {} : { periodStart: BigInt(query.period_start) }) }),
      ),
  }),
  listRoute({
    method: 'GET', path: '/v1/usage/alerts', summary: 'List recent threshold alerts', query: ListUsageAlertsQueryDto, response: USAGE_ALERT_SCHEMA,
    handler: async ({ services, tenant, query }) => {
      const { alerts, page } = await services.usageMetering.listUsageAlerts({ tenant, page: pageRequest(query), subscriptionId: query.subscription });
      return listEnvelope('/v1/usage/alerts', alerts.map(presentUsageAlert), query, page);
    },
  }),
  route({
    method: 'POST', path: '/v1/usage/limits', summary: "Set or remove a subscription's own usage limit of a metric", body: SetUsageLimitDto, response: USAGE_LIMIT_SCHEMA,
    handler: async ({ services, tenant, body }) =>
      presentUsageLimit(
        (await services.usageMetering.setUsageLimit({ tenant, subscriptionId: body.subscription, metricName: body.metric_name, ...(body.limit === null || body.limit === undefined ? {} : { limit: BigInt(body.limit) }) })).limit!,
      ),
  }),
]);
