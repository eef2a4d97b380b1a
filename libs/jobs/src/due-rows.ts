/**
 * A table of due-time rows that a service owns (deliveries, renewals, dunning steps…): a row
 * is due once its due column is at or before the clock's time, and a claimed row is leased to
 * its worker until its lease column's time. Rows are identified by an `id` column.
 */
export interface DueRowsTable {
  /** Table name, e.g. `deliveries`. */
  table: string;
  /** When the row is next due (timestamptz); null: not scheduled. */
  dueAt: string;
  /** Until when a claimed row belongs to its worker (timestamptz; null when free). */
  leaseUntil: string;
  /** The condition of rows that still have work, e.g. `status = 'pending'`. */
  pending?: string;
}

/**
 * The parameters of claimDueRowsSql, in order: the clock's time, the lease's end, the limit.
 * Time is always a parameter: due-ness is never decided by the database's now(), so a
 * sandbox test clock can move time for its customers.
 */
export function claimParams(now: Date, leaseMs: number, limit: number): [Date, Date, number] {
  return [now, new Date(now.getTime() + leaseMs), limit];
}

/**
 * Two common table expressions that lease up to $3 due rows: `due` locks them with
 * SKIP LOCKED (concurrent workers take different rows, nobody waits) and `claimed` sets the
 * lease and returns the whole rows. A lease that lapsed (its worker died) is claimed again.
 * Put it after WITH and select from `claimed`, joining the service's own tables:
 *   `WITH ${claimDueRowsSql(table)} SELECT c.id, e.url FROM claimed c JOIN endpoints e ON …`
 * with claimParams(now, leaseMs, limit) as $1–$3. Services run it through `claimDueRows`
 * (@recur/persistence), which plans it to walk the due rows' index.
 */
export function claimDueRowsSql({ table, dueAt, leaseUntil, pending }: DueRowsTable): string {
  return `due AS (
      SELECT id FROM ${table}
      WHERE ${pending ? `(${pending}) AND ` : ''}${dueAt} <= $1::timestamptz AND (${leaseUntil} IS NULL OR ${leaseUntil} < $1::timestamptz)
      ORDER BY ${dueAt}
      LIMIT $3::int
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE ${table} job SET ${leaseUntil} = $2::timestamptz FROM due WHERE job.id = due.id
      RETURNING job.*
    )`;
}

/**
 * When the next row becomes claimable (due and not leased), as `next_due_at`; null when no
 * row has work. Lets a worker sleep exactly until then instead of a whole poll interval.
 */
export function nextDueAtSql({ table, dueAt, leaseUntil, pending }: DueRowsTable): string {
  return `SELECT min(greatest(${dueAt}, coalesce(${leaseUntil}, ${dueAt}))) AS next_due_at
    FROM ${table} WHERE ${pending ? `(${pending}) AND ` : ''}${dueAt} IS NOT NULL`;
}
