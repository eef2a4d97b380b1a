import type { Pool } from 'pg';

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
