import type { Pool, PoolClient, QueryResult } from 'pg';
import { CoalescingNotifier } from './notifier';

/** The raw SQL a command's bookkeeping runs inside an open transaction, whichever driver opened it. */
export interface SqlStatements {
  /** Runs one statement and answers its rows. */
  query<Row>(sql: string, values: unknown[]): Promise<Row[]>;
  /** Runs one statement that answers no rows worth reading (including SELECTs of void functions). */
  execute(sql: string, values: unknown[]): Promise<void>;
}

/**
 * SQL inside an open transaction, with two ways to spare round trips where the driver has them
 * (a `pg` transaction sends several statements as one simple query; Prisma's runs them one by one).
 * Their statements take no parameters: values go in as `sqlLiteral`s.
 */
export interface TransactionStatements extends SqlStatements {
  /** Runs the statements in order, each under a snapshot taken after the one before it finished; answers each one's rows. */
  script(statements: readonly string[]): Promise<unknown[][]>;
  /**
   * Runs the statement last, with the COMMIT (a failure fails the commit); at once where the driver
   * cannot join them. A ROLLBACK TO SAVEPOINT does not take it back: give it only what commits
   * whatever the rest did (CommandResults gives it the answer, once the work has finished).
   */
  executeAtCommit(statement: string): Promise<void>;
}

/**
 * The port CommandResults works over: opens a transaction whose client is a `Tx` (what the
 * command's own code writes with), and runs raw SQL in it. Two implementations: Prisma's
 * interactive transaction (`prismaTransactions`) and a plain `pg` pool's (`PgTransactions`).
 */
export interface TransactionRunner<Tx> {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<R>(work: (tx: Tx) => Promise<R>): Promise<R>;
  statements(tx: Tx): TransactionStatements;
}

/**
 * A value written into SQL text as a literal, for statements sent without parameters
 * (`TransactionStatements`): strings as the driver's own escaping writes them (`pg.escapeLiteral`),
 * bytes as hex, dates as UTC ISO text.
 */
export function sqlLiteral(value: string | number | boolean | Date | Uint8Array | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
    return String(value);
  }
  if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
  if (value instanceof Uint8Array) return `decode('${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}', 'hex')`;
  // pg.escapeLiteral's very output, made with two replaces: it appends a character at a time,
  // and its intermediate strings were 4 % of what a create allocated (heap sampling, docs/performance.md).
  const quoted = `'${value.replace(/'/g, "''")}'`;
  return value.includes('\\') ? ` E${quoted.replace(/\\/g, '\\\\')}` : quoted;
}

/** What every service's generated Prisma transaction client has of raw SQL. */
export interface PrismaRawSql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A Prisma client that opens interactive transactions with client `Tx`. */
export interface PrismaTransactions<Tx extends PrismaRawSql> {
  $transaction<R>(work: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/**
 * How long a Prisma command may wait for a connection and then run. Prisma's defaults (2 s, 5 s)
 * fail a burst of retries that queue for the pool after a restart; callers' deadlines are 10 s.
 */
const PRISMA_TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 10_000 };

/** Prisma's interactive transactions as a TransactionRunner. */
export function prismaTransactions<Tx extends PrismaRawSql>(prisma: PrismaTransactions<Tx>): TransactionRunner<Tx> {
  return {
    transaction: (work) => prisma.$transaction(work, PRISMA_TRANSACTION_OPTIONS),
    statements: prismaStatements,
  };
}

/** Raw SQL in a Prisma interactive transaction: its statements go one by one. */
function prismaStatements(tx: PrismaRawSql): TransactionStatements {
  const query = async <Row>(sql: string, values: unknown[]) => (await tx.$queryRawUnsafe<Row[]>(sql, ...values));
  return {
    query,
    execute: async (sql: string, values: unknown[]) => {
      await tx.$executeRawUnsafe(sql, ...values);
    },
    async script(statements) {
      const results: unknown[][] = [];
      for (const statement of statements) results.push(await query(statement, []));
      return results;
    },
    executeAtCommit: async (statement) => {
      await tx.$executeRawUnsafe(statement);
    },
  };
}

/**
 * A transaction open on one `pg` connection. Its BEGIN goes out with its first statement, and the
 * statements given `executeAtCommit` with its COMMIT: a command whose bookkeeping is scripts
 * (CommandResults) spends no round trip on either. Besides SQL, it can wake listeners once it has
 * committed: a NOTIFY inside the transaction takes PostgreSQL's global notify lock through the
 * commit's WAL flush and so serialises every notifying commit (docs/performance.md).
 */
export class PgTransaction implements TransactionStatements {
  /** Channels to NOTIFY after COMMIT, each once. */
  readonly channelsToNotify = new Set<string>();
  /** Whether BEGIN has been sent (with the first statement). */
  private begun = false;
  private readonly atCommit: string[] = [];

  constructor(private readonly client: PoolClient) {}

  async query<Row>(sql: string, values: unknown[] = []): Promise<Row[]> {
    await this.begin();
    return (await this.client.query(sql, values)).rows as Row[];
  }

  async execute(sql: string, values: unknown[] = []): Promise<void> {
    await this.begin();
    await this.client.query(sql, values);
  }

  /** One simple query (with the BEGIN, if not sent yet): a statement's snapshot is taken when it starts, after the one before it. */
  async script(statements: readonly string[]): Promise<unknown[][]> {
    const opening = this.begun ? [] : ['BEGIN'];
    this.begun = true;
    const answered: QueryResult | QueryResult[] = await this.client.query([...opening, ...statements].join(';\n'));
    const results = Array.isArray(answered) ? answered : [answered];
    return results.slice(opening.length).map((result) => result.rows);
  }

  async executeAtCommit(statement: string): Promise<void> {
    this.atCommit.push(statement);
  }

  /**
   * NOTIFY `channel` once this transaction has committed; nothing if it rolls back. A wake-up
   * lost between the COMMIT and the NOTIFY (the process died) is covered by the listener's
   * polling fallback, as one lost across a reconnect is.
   */
  notifyAfterCommit(channel: string): void {
    this.channelsToNotify.add(channel);
  }

  /** The statements given executeAtCommit, then COMMIT, in one round trip; nothing when nothing ran. */
  async commit(): Promise<void> {
    if (!this.begun && this.atCommit.length === 0) return;
    await this.script([...this.atCommit, 'COMMIT']);
  }

  /** ROLLBACK, when BEGIN went out. */
  async rollback(): Promise<void> {
    if (this.begun) await this.client.query('ROLLBACK');
  }

  private async begin(): Promise<void> {
    if (this.begun) return;
    this.begun = true;
    await this.client.query('BEGIN');
  }
}

/**
 * Transactions on a plain `pg` pool: about a seventh of the CPU of Prisma's interactive transaction
 * for the same statements (tools/bench), for hot commands. Share the pool Prisma's adapter uses, so
 * a service keeps one set of connections. The wake-ups a transaction asks for go out after its
 * COMMIT through a CoalescingNotifier: the command answers without waiting for them.
 */
export class PgTransactions implements TransactionRunner<PgTransaction> {
  private readonly notifier: CoalescingNotifier;

  constructor(
    private readonly pool: Pool,
    onNotifyFailed: (error: Error) => void = () => undefined,
  ) {
    this.notifier = new CoalescingNotifier(pool, onNotifyFailed);
  }

  async transaction<R>(work: (tx: PgTransaction) => Promise<R>): Promise<R> {
    const client = await this.pool.connect();
    // The server may drop the connection between statements; the next query reports it, not the process.
    const ignoreConnectionError = () => undefined;
    client.on('error', ignoreConnectionError);
    const release = (error?: Error) => {
      client.off('error', ignoreConnectionError);
      client.release(error);
    };
    const tx = new PgTransaction(client);
    let result: R;
    try {
      result = await work(tx);
      await tx.commit();
    } catch (error) {
      // A connection that cannot even roll back is discarded rather than returned to the pool.
      const rollbackFailed = await tx.rollback().then(() => undefined, (rollbackError: Error) => rollbackError);
      release(rollbackFailed);
      throw error;
    }
    release();
    // Committed: a wake-up cannot turn the command into a failure (a retry would repeat it).
    for (const channel of tx.channelsToNotify) this.notifier.notify(channel);
    return result;
  }

  statements(tx: PgTransaction): TransactionStatements {
    return tx;
  }
}

/** An open transaction of either kind, for repositories that write the same SQL in both (a batch on `pg`, a command on Prisma). */
export type OpenTransaction = PgTransaction | PrismaRawSql;

/** The raw SQL of an open transaction of either kind. */
export function statementsOf(tx: OpenTransaction): SqlStatements {
  return tx instanceof PgTransaction ? tx : prismaStatements(tx);
}

/**
 * Wakes `channel`'s listeners once `tx` commits: after the COMMIT on a PgTransaction, inside the
 * transaction on Prisma's (which can run nothing after its commit; delivered only if it commits).
 */
export async function notifyOnCommit(tx: OpenTransaction, channel: string): Promise<void> {
  if (tx instanceof PgTransaction) tx.notifyAfterCommit(channel);
  else await tx.$executeRawUnsafe('SELECT pg_notify($1, $2)', channel, '');
}
