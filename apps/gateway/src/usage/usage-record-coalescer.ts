import type { MessageInitShape } from '@bufbuild/protobuf';
import { type commonV1, fromGrpcError, type usageMeteringV1, type usageV1 } from '@recur/contracts';
import { DomainError, type ErrorKind } from '@recur/kernel';
import { USAGE_BATCH_MAX } from '@recur/vocabulary';

type Tenant = MessageInitShape<typeof commonV1.TenantSchema>;
type RecordInput = MessageInitShape<typeof usageMeteringV1.UsageRecordInputSchema>;

/** The two RPCs the coalescer sends: the batch for groups, the single call when a group is refused whole. */
export interface UsageRecorder {
  recordUsageBatch(request: { tenant: Tenant; records: RecordInput[] }): Promise<{ results: usageMeteringV1.UsageRecordResult[] }>;
  recordUsage(request: { tenant: Tenant; record: RecordInput }): Promise<{ record?: usageV1.UsageRecord; replayed: boolean }>;
}

export interface RecordedUsage {
  record: usageV1.UsageRecord;
  replayed: boolean;
}

interface Waiting {
  record: RecordInput;
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
 * `RecordUsageBatch`: one gRPC call, one SQL statement and one commit for the group instead of
 * one each per record (README, Performance). Each caller still gets its own answer, and only
 * once the batch has committed, exactly as `RecordUsage` would answer it: its record (the
 * original on a replay, also when a concurrent caller of the same group sent it first), or its
 * own error, of the kind `RecordUsage` fails with and with `param` without the batch's
 * `records[i].` prefix. A group refused whole (a record the service finds malformed though the
 * door let it through: the door allows subscription ids of up to 100 characters, the service 64)
 * is sent again one record at a time, so one caller's bad record never fails another's.
 *
 * A lane holds at most `maxInFlight` batches in flight: a record arriving meanwhile waits
 * for one to finish and goes with every record that arrived in that time. At low load a
 * record leaves on the next turn of the event loop, alone; under load the groups grow.
 */
export class UsageRecordCoalescer {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly recorder: UsageRecorder,
    private readonly maxInFlight = 1,
  ) {}

  record(tenant: Tenant, record: RecordInput): Promise<RecordedUsage> {
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
    let results: usageMeteringV1.UsageRecordResult[];
    try {
      ({ results } = await this.recorder.recordUsageBatch({ tenant, records: group.map((waiting) => waiting.record) }));
    } catch (error) {
      // Also a group of one: resent alone, its error names `subscription`, not `records[0].subscription`.
      const refusedWhole = fromGrpcError(error).kind === 'invalid_argument';
      if (!refusedWhole) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      await Promise.all(group.map((waiting) => this.recorder.recordUsage({ tenant, record: waiting.record }).then((answer) => waiting.resolve({ record: answer.record!, replayed: answer.replayed }), waiting.reject)));
      return;
    }
    group.forEach((waiting, index) => {
      const result = results[index];
      if (!result) waiting.reject(new DomainError('internal', 'internal_error', 'An internal error occurred.'));
      else if (result.error) waiting.reject(asSingleRecordError(result.error, index));
      else waiting.resolve({ record: result.record!, replayed: result.replayed });
    });
  }
}

/** A batch result's error as `RecordUsage` would have failed with it. */
function asSingleRecordError(error: usageMeteringV1.UsageRecordError, index: number): DomainError {
  const prefix = `records[${index}].`;
  const param = error.param.startsWith(prefix) ? error.param.slice(prefix.length) : error.param;
  const kind = KINDS.has(error.kind as ErrorKind) ? (error.kind as ErrorKind) : 'internal';
  return new DomainError(kind, error.code, error.message, param || undefined);
}
