import type { MessageInitShape } from '@bufbuild/protobuf';
import { type commonV1, fromGrpcError, presentUsageRecord, type UsageRecordJson, type usageMeteringV1, type usageV1 } from '@recur/contracts';
import { DomainError, type ErrorKind } from '@recur/kernel';
import { toInt64 } from '@recur/money';
import { USAGE_BATCH_MAX } from '@recur/vocabulary';
import type { RecordUsageDto } from './usage.dto';
import { receiptRecord, refusalsOf, toColumns } from './usage-receipt';

/** The caller's tenant; its livemode is also the records' `livemode`. */
type Tenant = MessageInitShape<typeof commonV1.TenantSchema> & { livemode: boolean };
type RecordInput = MessageInitShape<typeof usageMeteringV1.UsageRecordInputSchema>;
type Columns = MessageInitShape<typeof usageMeteringV1.UsageRecordColumnsSchema>;

/** The two RPCs the coalescer sends: the batch (brief, as columns) for groups, the single call when a group is refused whole. */
export interface UsageRecorder {
  recordUsageBatch(request: { tenant: Tenant; columns: Columns; brief: true }): Promise<{ receipt?: usageMeteringV1.UsageBatchReceipt }>;
  recordUsage(request: { tenant: Tenant; record: RecordInput }): Promise<{ record?: usageV1.UsageRecord; replayed: boolean }>;
}

export interface RecordedUsage {
  record: UsageRecordJson;
  replayed: boolean;
}

interface Waiting {
  record: RecordUsageDto;
  resolve: (answer: RecordedUsage) => void;
  reject: (error: unknown) => void;
}

/** One tenant's records waiting for a batch, and its batches in flight. */
interface Lane {
  tenant: Tenant;
  waiting: Waiting[];
  inFlight: number;
  scheduled: boolean;
}

const KINDS = new Set<ErrorKind>(['invalid_argument', 'not_found', 'already_exists', 'conflict', 'failed_precondition', 'unauthenticated', 'permission_denied', 'resource_exhausted', 'unavailable', 'internal']);

/**
 * Sends concurrent single records (`POST /v1/usage`) of one tenant to usage-metering as one
 * `RecordUsageBatch` (as columns, answered by a brief receipt: no message per record): one gRPC
 * call, one SQL statement and one commit for the group instead of one each per record (docs/performance.md). Each caller still gets its own answer, and only
 * once the batch has committed, exactly as `RecordUsage` would answer it: its record (the
 * original on a replay, also when a concurrent caller of the same group sent it first), or its
 * own error, of the kind `RecordUsage` fails with and with `param` without the batch's
 * `records[i].` prefix. A group refused whole (a record the service finds malformed though the
 * door let it through: the door allows subscription ids of up to 100 characters, the service 64)
 * is sent again one record at a time, so one caller's bad record never fails another's.
 *
 * A lane holds at most `maxInFlight` batches in flight (one by default: with two, groups were
 * half as large and the statement and commit per record twice as many, for 15 % less
 * throughput): a record arriving meanwhile waits for one to finish and goes with every record
 * that arrived in that time. At low load a
 * record leaves on the next turn of the event loop, alone; under load the groups grow.
 */
export class UsageRecordCoalescer {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly recorder: UsageRecorder,
    private readonly maxInFlight = 1,
  ) {}

  record(tenant: Tenant, record: RecordUsageDto): Promise<RecordedUsage> {
    const key = `${tenant.accountId} ${tenant.livemode}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { tenant, waiting: [], inFlight: 0, scheduled: false };
      this.lanes.set(key, lane);
    }
    const answer = new Promise<RecordedUsage>((resolve, reject) => lane.waiting.push({ record, resolve, reject }));
    if (!lane.scheduled && lane.inFlight < this.maxInFlight) {
      lane.scheduled = true;
      setImmediate(() => this.flush(key, lane));
    }
    return answer;
  }

  private flush(key: string, lane: Lane): void {
    lane.scheduled = false;
    while (lane.waiting.length > 0 && lane.inFlight < this.maxInFlight) {
      const group = lane.waiting.splice(0, USAGE_BATCH_MAX);
      lane.inFlight++;
      void this.send(lane.tenant, group).finally(() => {
        lane.inFlight--;
        if (lane.waiting.length > 0) this.flush(key, lane);
        else if (lane.inFlight === 0 && !lane.scheduled) this.lanes.delete(key);
      });
    }
  }

  private async send(tenant: Tenant, group: Waiting[]): Promise<void> {
    let receipt: usageMeteringV1.UsageBatchReceipt | undefined;
    try {
      ({ receipt } = await this.recorder.recordUsageBatch({ tenant, columns: toColumns(group.map((waiting) => waiting.record)), brief: true }));
    } catch (error) {
      // Also a group of one: resent alone, its error names `subscription`, not `records[0].subscription`.
      const refusedWhole = fromGrpcError(error).kind === 'invalid_argument';
      if (!refusedWhole) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      await Promise.all(
        group.map((waiting) =>
          this.recorder.recordUsage({ tenant, record: toInput(waiting.record) }).then((answer) => waiting.resolve({ record: presentUsageRecord(answer.record!), replayed: answer.replayed }), waiting.reject),
        ),
      );
      return;
    }
    const refusals = receipt ? refusalsOf(receipt) : new Map<number, usageMeteringV1.UsageRecordError>();
    group.forEach((waiting, index) => {
      const error = refusals.get(index);
      if (!receipt || receipt.ids.length !== group.length) waiting.reject(new DomainError('internal', 'internal_error', 'An internal error occurred.'));
      else if (error) waiting.reject(asSingleRecordError(error, index));
      else waiting.resolve({ record: receiptRecord(tenant.livemode, waiting.record, receipt, index), replayed: receipt.replayed[index] });
    });
  }
}

const toInput = (body: RecordUsageDto): RecordInput => ({
  subscriptionId: body.subscription,
  metricName: body.metric_name,
  quantity: toInt64(body.quantity, 'quantity'),
  idempotencyKey: body.idempotency_key,
  timestamp: body.timestamp === undefined ? undefined : BigInt(body.timestamp),
});

/** A batch result's error as `RecordUsage` would have failed with it. */
function asSingleRecordError(error: usageMeteringV1.UsageRecordError, index: number): DomainError {
  const prefix = `records[${index}].`;
  const param = error.param.startsWith(prefix) ? error.param.slice(prefix.length) : error.param;
  const kind = KINDS.has(error.kind as ErrorKind) ? (error.kind as ErrorKind) : 'internal';
  return new DomainError(kind, error.code, error.message, param || undefined);
}
