import { claimDueRowsSql, claimParams, type DueRowsTable } from '@recur/jobs';
import type { Pool, QueryResult } from 'pg';
import { sqlLiteral } from './transactions';

/** A value `sqlLiteral` writes. */
type LiteralValue = Parameters<typeof sqlLiteral>[0];

/**
 * `sql` with its `$n` placeholders replaced by the literals of `params[n - 1]`, for a simple query
 * (which takes no parameters). `sql` must hold no `$` but its placeholders, as the statements
 * built here do not.
 */
export function withLiterals(sql: string, params: readonly LiteralValue[]): string {
  return sql.replace(/\$(\d+)/g, (_, position: string) => {
    const index = Number(position) - 1;
    if (index >= params.length) throw new RangeError(`no value for $${position}`);
    return sqlLiteral(params[index]);
  });
}

/**
 * Select-list items that turn the planner's bitmap and sequential scans off for the rest of the
 * transaction alone (`set_config(…, true)`), so a claim walks its index in order. Why:
 * queryByIndexScans.
 */
export const INDEX_SCANS_ONLY = "set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)";

/**
 * Runs one statement in a transaction of its own, planned with bitmap and sequential scans off (for
 * that transaction alone: INDEX_SCANS_ONLY), in one round trip; resolves to its rows.
 *
 * For the claims of rows queued in a table whose rows change state (due rows leased and then done,
 * `claimDueRowsSql`): each change leaves a dead entry in the index the claim walks, until a vacuum
 * removes it, and autovacuum waits for a fifth of the table to be dead. When the planner expects
 * fewer rows than the claim's limit it picks a bitmap scan, which reads every dead entry in range
 * and its heap page on every claim and never marks one dead: webhook-dispatch's claims read 4 240
 * entries each to lease 32 deliveries in a 5 000-delivery burst. An index scan marks the dead
 * entries it passes, so the next claim skips them, and it stops at the limit.
 */
export async function queryByIndexScans<Row extends object>(pool: Pool, sql: string, params: readonly LiteralValue[]): Promise<Row[]> {
  const script = `BEGIN;
    SELECT ${INDEX_SCANS_ONLY};
    ${withLiterals(sql, params)};
    COMMIT`;
  const client = await pool.connect();
  // A connection the server or the network drops mid-claim fails the query; pg also emits 'error'
  // on the client, which, with no listener on a checked-out client, would end the process.
  const ignoreConnectionError = () => undefined;
  client.on('error', ignoreConnectionError);
  const release = (error?: Error) => {
    client.off('error', ignoreConnectionError);
    client.release(error);
  };
  try {
    // A simple query of several statements answers one result per statement.
    const results = (await client.query(script)) as unknown as QueryResult<Row>[];
    release();
    return results[2].rows;
  } catch (error) {
    // A failed statement leaves the transaction open and aborted: close it before reuse.
    const rolledBack = await client.query('ROLLBACK').then(() => true, () => false);
    release(rolledBack ? undefined : (error as Error));
    throw error;
  }
}

/** A claim of due rows, as a JobWorker's `claim` takes it once given the lease's length. */
export type DueRowsClaim<Row> = (limit: number, at: Date, leaseMs: number) => Promise<Row[]>;

/**
 * The claim of `rows` (claimDueRowsSql, @recur/jobs) that every worker runs: it leases up to `limit`
 * rows due at `at` until `at + leaseMs` and answers `select` over them, in one round trip, walking
 * the due rows' index (queryByIndexScans says why). `select` reads the leased rows as `claimed c`,
 * joined with whatever else the jobs need: `SELECT c.id, e.url FROM claimed c JOIN endpoints e ON …`.
 */
export function claimDueRows<Row extends object>(pool: Pool, rows: DueRowsTable, select: string): DueRowsClaim<Row> {
  const sql = `WITH ${claimDueRowsSql(rows)} ${select}`;
  return (limit, at, leaseMs) => queryByIndexScans<Row>(pool, sql, claimParams(at, leaseMs, limit));
}
