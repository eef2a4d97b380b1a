import { Pool } from 'pg';

/**
 * Keeps a pool's lost idle connections from crashing the process. pg emits 'error' on the pool
 * when the server drops an idle connection (a restart, a failover, `npm start` stopping its
 * PostgreSQL, code 57P01); with no listener Node throws it as an unhandled 'error' event. The pool
 * has already discarded that connection and opens another for the next query, so there is nothing
 * to do but say so.
 */
export function survivingConnectionLoss(pool: Pool, onLost: (error: Error) => void = () => undefined): Pool {
  pool.on('error', onLost);
  return pool;
}

/**
 * Ends the pool a PrismaClient was given (`new PrismaPg(pool, { disposeExternalPool: true })`),
 * after `$disconnect()`. Prisma ends it only if Prisma itself connected; a service whose raw-SQL
 * paths were the only ones to use it would otherwise keep its connections open after it stopped.
 */
export async function endPool(pool: Pool): Promise<void> {
  if (!pool.ending && !pool.ended) await pool.end();
}

/**
 * How long a connection may sit unused before its pool closes it. pg's default, 10 s, closed
 * connections between bursts of ordinary traffic and opened them again in the next burst, each
 * paying a backend's fork and a SCRAM handshake on the request path (slow windows in the bench's
 * half-peak phases); five minutes keeps a busy replica's connections and gives a quiet one's back.
 */
export const POOL_IDLE_TIMEOUT_MS = 300_000;

/**
 * A service's pool on its own database: Prisma's adapter runs on it, and so do the hot paths that
 * skip the ORM. A query waits at most 10 s for a connection (as Prisma's transactions do,
 * maxWait); a lost idle connection does not crash the process.
 */
export function servicePool(databaseUrl: string, { max = 10 }: { max?: number } = {}): Pool {
  return survivingConnectionLoss(new Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 10_000, idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS }));
}
