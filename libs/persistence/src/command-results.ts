import { create, type DescMessage, fromBinary, type MessageInitShape, type MessageShape, toBinary } from '@bufbuild/protobuf';
import { DomainError, type ErrorKind, isDomainError, type TenantRef } from '@recur/kernel';

/**
 * The table every service with commands declares in its own Prisma schema:
 *
 *   model CommandResult {
 *     accountId String; livemode Boolean; rpc String; requestId String   -- the primary key
 *     response Bytes?                                                     -- the answer's toBinary, or
 *     errorKind, errorCode, errorMessage, errorParam String?              -- the domain error it failed with
 *     createdAt DateTime
 *     @@id([accountId, livemode, rpc, requestId]) @@map("command_results")
 *   }
 */
export const COMMAND_RESULTS_TABLE = 'command_results';

/** What the wrapper needs of a Prisma transaction client; every service's generated client has it. */
export interface CommandTransaction {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A Prisma client that opens interactive transactions with client `Tx`. */
export interface CommandDatabase<Tx extends CommandTransaction> {
  $transaction<R>(work: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/**
 * How long a command may wait for a connection and then run. Prisma's defaults (2 s, 5 s) fail
 * a burst of retries that queue for the pool after a restart; callers' deadlines are 10 s.
 */
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 10_000 };

/** What every command request carries: its tenant and the caller's request id (empty: not repeatable). */
export interface CommandRequest {
  requestId: string;
}

interface StoredResult {
  response: Uint8Array | null;
  error_kind: string | null;
  error_code: string | null;
  error_message: string | null;
  error_param: string | null;
}

/**
 * Makes every mutating RPC safe to repeat. A command runs in one transaction together with the
 * record of its answer (`command_results`: tenant + RPC + request id → the response message's
 * bytes, or the domain error it failed with), so a repeat of the same request id — a gRPC retry
 * after the peer died mid-call, a gateway retry — answers exactly the first answer and changes
 * nothing. Repeats that arrive while the first still runs wait for it (an advisory lock on the
 * key). A command that failed on infrastructure (not a DomainError) records nothing, so a repeat
 * runs again. An empty request id runs the command as a plain transaction.
 */
export class CommandResults<Tx extends CommandTransaction> {
  constructor(private readonly db: CommandDatabase<Tx>) {}

  /**
   * Runs `work` once per (tenant, RPC, request id). The RPC is named by its response message
   * (each RPC has its own), so the key can never name the wrong method.
   */
  async run<S extends DescMessage>(
    tenant: TenantRef,
    request: CommandRequest,
    responseSchema: S,
    work: (tx: Tx) => Promise<MessageInitShape<S>>,
  ): Promise<MessageShape<S>> {
    if (!request.requestId) return this.db.$transaction(async (tx) => create(responseSchema, await work(tx)), TRANSACTION_OPTIONS);
    const key = [tenant.accountId, tenant.livemode, responseSchema.typeName.replace(/Response$/, ''), request.requestId] as const;
    const outcome = await this.db.$transaction(async (tx): Promise<StoredResult> => {
      await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', JSON.stringify(key));
      const earlier = await this.find(tx, key);
      if (earlier) return earlier;
      // A refusal is recorded too, but the refused command's partial writes must not be.
      await tx.$executeRawUnsafe('SAVEPOINT command');
      try {
        const response = toBinary(responseSchema, create(responseSchema, await work(tx)));
        await this.insert(tx, key, { response, error_kind: null, error_code: null, error_message: null, error_param: null });
        return { response, error_kind: null, error_code: null, error_message: null, error_param: null };
      } catch (error) {
        if (!isDomainError(error)) throw error;
        await tx.$executeRawUnsafe('ROLLBACK TO SAVEPOINT command');
        const refusal = { response: null, error_kind: error.kind, error_code: error.code, error_message: error.message, error_param: error.param ?? null };
        await this.insert(tx, key, refusal);
        return refusal;
      }
    }, TRANSACTION_OPTIONS);
    return answer(responseSchema, outcome);
  }

  private async find(tx: Tx, key: readonly unknown[]): Promise<StoredResult | undefined> {
    const rows = await tx.$queryRawUnsafe<StoredResult[]>(
      `SELECT response, error_kind, error_code, error_message, error_param FROM ${COMMAND_RESULTS_TABLE}
        WHERE account_id = $1 AND livemode = $2 AND rpc = $3 AND request_id = $4`,
      ...key,
    );
    return rows[0];
  }

  private async insert(tx: Tx, key: readonly unknown[], result: StoredResult): Promise<void> {
    await tx.$executeRawUnsafe(
      `INSERT INTO ${COMMAND_RESULTS_TABLE} (account_id, livemode, rpc, request_id, response, error_kind, error_code, error_message, error_param)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      ...key, result.response, result.error_kind, result.error_code, result.error_message, result.error_param,
    );
  }
}

function answer<S extends DescMessage>(schema: S, result: StoredResult): MessageShape<S> {
  if (result.response !== null) return fromBinary(schema, result.response);
  throw new DomainError(result.error_kind as ErrorKind, result.error_code ?? 'internal_error', result.error_message ?? '', result.error_param ?? undefined);
}
