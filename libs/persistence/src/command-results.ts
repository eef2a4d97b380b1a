import { create, type DescMessage, fromBinary, type MessageInitShape, type MessageShape, toBinary } from '@bufbuild/protobuf';
import { DomainError, type ErrorKind, isDomainError, type TenantRef } from '@recur/kernel';
import { type PrismaRawSql, type PrismaTransactions, prismaTransactions, sqlLiteral, type TransactionRunner } from './transactions';

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
 * key). A command that failed on infrastructure records nothing, so a repeat runs again: a thrown
 * error that is not a DomainError, and a DomainError of a 5xx kind (`unavailable`, `internal`: a
 * peer it called could not be reached or failed), which would otherwise answer every repeat of the
 * request id — every retry with the same Idempotency-Key — with that 5xx for as long as answers
 * are kept (docs/api/conventions.md#idempotency). An empty request id runs the command as a plain
 * transaction.
 *
 * It works over a TransactionRunner, so the same bookkeeping runs in a Prisma interactive
 * transaction (given the Prisma client: `Tx` is its transaction client) or in a plain `pg` one
 * (given `new PgTransactions(pool)`: `Tx` is a PgTransaction) for hot commands.
 */
export class CommandResults<Tx> {
  private readonly transactions: TransactionRunner<Tx>;

  /** A service's Prisma client (every service's `Commands` passes its own), or any TransactionRunner. */
  constructor(database: PrismaTransactions<Tx & PrismaRawSql> | TransactionRunner<Tx>) {
    this.transactions = '$transaction' in database ? (prismaTransactions(database) as TransactionRunner<Tx>) : database;
  }

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
    if (!request.requestId) return this.transactions.transaction(async (tx) => create(responseSchema, await work(tx)));
    const key: CommandKey = [tenant.accountId, tenant.livemode, responseSchema.typeName.replace(/Response$/, ''), request.requestId];
    const outcome = await this.transactions.transaction(async (tx): Promise<StoredResult> => {
      const sql = this.transactions.statements(tx);
      // One round trip on `pg` (with the BEGIN): the key's lock; an earlier answer, read under a
      // snapshot taken once the lock was granted, so a repeat that waited sees what it waited for;
      // and the savepoint a refusal rolls back to.
      const [, [earlier]] = (await sql.script([lockStatement(key), findStatement(key), 'SAVEPOINT command'])) as [unknown[], StoredResult[]];
      if (earlier) return earlier;
      let result: StoredResult;
      try {
        const response = toBinary(responseSchema, create(responseSchema, await work(tx)));
        result = { response, error_kind: null, error_code: null, error_message: null, error_param: null };
      } catch (error) {
        if (!isDomainError(error) || RETRYABLE_KINDS.has(error.kind)) throw error;
        // A refusal is recorded too, but the refused command's partial writes must not be.
        await sql.execute('ROLLBACK TO SAVEPOINT command', []);
        result = { response: null, error_kind: error.kind, error_code: error.code, error_message: error.message, error_param: error.param ?? null };
      }
      // The answer goes in with the COMMIT (one round trip on `pg`).
      await sql.executeAtCommit(insertStatement(key, result));
      return result;
    });
    return answer(responseSchema, outcome);
  }

}

/** The kinds of a DomainError that answer a 5xx: a failure of the moment, not the command's answer. */
const RETRYABLE_KINDS: ReadonlySet<ErrorKind> = new Set(['unavailable', 'internal']);

type CommandKey = readonly [accountId: string, livemode: boolean, rpc: string, requestId: string];

/** Serialises the runs of one key until the transaction ends (a row, not `void`: Prisma's raw queries cannot read a void column). */
const lockStatement = (key: CommandKey) => `SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${sqlLiteral(JSON.stringify(key))}, 0))`;

const keyCondition = ([accountId, livemode, rpc, requestId]: CommandKey) =>
  `account_id = ${sqlLiteral(accountId)} AND livemode = ${sqlLiteral(livemode)} AND rpc = ${sqlLiteral(rpc)} AND request_id = ${sqlLiteral(requestId)}`;

const findStatement = (key: CommandKey) =>
  `SELECT response, error_kind, error_code, error_message, error_param FROM ${COMMAND_RESULTS_TABLE} WHERE ${keyCondition(key)}`;

function insertStatement([accountId, livemode, rpc, requestId]: CommandKey, result: StoredResult): string {
  const values = [accountId, livemode, rpc, requestId, result.response, result.error_kind, result.error_code, result.error_message, result.error_param].map(sqlLiteral);
  return `INSERT INTO ${COMMAND_RESULTS_TABLE} (account_id, livemode, rpc, request_id, response, error_kind, error_code, error_message, error_param)
     VALUES (${values.join(', ')})`;
}

function answer<S extends DescMessage>(schema: S, result: StoredResult): MessageShape<S> {
  if (result.response !== null) return fromBinary(schema, result.response);
  throw new DomainError(result.error_kind as ErrorKind, result.error_code ?? 'internal_error', result.error_message ?? '', result.error_param ?? undefined);
}
