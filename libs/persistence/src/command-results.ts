import { create, type DescMessage, fromBinary, type MessageInitShape, type MessageShape, toBinary } from '@bufbuild/protobuf';
import { DomainError, type ErrorKind, isDomainError, type TenantRef } from '@recur/kernel';
import { type PrismaRawSql, type PrismaTransactions, prismaTransactions, type SqlStatements, type TransactionRunner } from './transactions';

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
 * key). A command that failed on infrastructure (not a DomainError) records nothing, so a repeat
 * runs again. An empty request id runs the command as a plain transaction.
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
    const key = [tenant.accountId, tenant.livemode, responseSchema.typeName.replace(/Response$/, ''), request.requestId] as const;
    const outcome = await this.transactions.transaction(async (tx): Promise<StoredResult> => {
      const sql = this.transactions.statements(tx);
      await sql.execute('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(key)]);
      const earlier = await find(sql, key);
      if (earlier) return earlier;
      // A refusal is recorded too, but the refused command's partial writes must not be.
      await sql.execute('SAVEPOINT command', []);
      try {
        const response = toBinary(responseSchema, create(responseSchema, await work(tx)));
        await insert(sql, key, { response, error_kind: null, error_code: null, error_message: null, error_param: null });
        return { response, error_kind: null, error_code: null, error_message: null, error_param: null };
      } catch (error) {
        if (!isDomainError(error)) throw error;
        await sql.execute('ROLLBACK TO SAVEPOINT command', []);
        const refusal = { response: null, error_kind: error.kind, error_code: error.code, error_message: error.message, error_param: error.param ?? null };
        await insert(sql, key, refusal);
        return refusal;
      }
    });
    return answer(responseSchema, outcome);
  }

}

async function find(sql: SqlStatements, key: readonly unknown[]): Promise<StoredResult | undefined> {
  const rows = await sql.query<StoredResult>(
    `SELECT response, error_kind, error_code, error_message, error_param FROM ${COMMAND_RESULTS_TABLE}
      WHERE account_id = $1 AND livemode = $2 AND rpc = $3 AND request_id = $4`,
    [...key],
  );
  return rows[0];
}

async function insert(sql: SqlStatements, key: readonly unknown[], result: StoredResult): Promise<void> {
  await sql.execute(
    `INSERT INTO ${COMMAND_RESULTS_TABLE} (account_id, livemode, rpc, request_id, response, error_kind, error_code, error_message, error_param)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [...key, result.response, result.error_kind, result.error_code, result.error_message, result.error_param],
  );
}

function answer<S extends DescMessage>(schema: S, result: StoredResult): MessageShape<S> {
  if (result.response !== null) return fromBinary(schema, result.response);
  throw new DomainError(result.error_kind as ErrorKind, result.error_code ?? 'internal_error', result.error_message ?? '', result.error_param ?? undefined);
}
