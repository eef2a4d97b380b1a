import { JobWorker } from '@recur/jobs';
import type { Clock } from '@recur/kernel';
import { Pool } from 'pg';
import { COMMAND_RESULTS_TABLE } from './command-results';
import { survivingConnectionLoss } from './pools';

/**
 * How long a command's first answer is kept: 7 days. Far longer than anyone repeats a request
 * id — the gateway's gRPC client retries within its 10 s deadline, and an Idempotency-Key (whose
 * record carries the request id) lives 24 hours — so a purged answer is never asked for again.
 */
export const COMMAND_RESULTS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Rows deleted per statement, so a large backlog never holds one long transaction. */
const PURGE_BATCH = 1_000;
/** The safety poll: a row becomes expired without any NOTIFY, so the worker also looks this often. */
const PURGE_POLL_MS = 60_000;

export interface CommandResultsPurgeOptions {
  databaseUrl: string;
  clock: Clock;
  retentionMs?: number;
  pollMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** One batch of expired answers to delete: those created before `cutoff`. */
interface PurgeBatch {
  cutoff: Date;
}

/**
 * Deletes `command_results` rows older than the retention, as a JobWorker (@recur/jobs): it
 * wakes when the oldest row expires (or on the safety poll) and deletes in batches. Replicas
 * may run it together: each batch skips rows another replica is deleting.
 */
export class CommandResultsPurge {
  private readonly pool: Pool;
  private readonly worker: JobWorker<PurgeBatch>;
  private readonly retentionMs: number;

  constructor(options: CommandResultsPurgeOptions) {
    this.pool = survivingConnectionLoss(new Pool({ connectionString: options.databaseUrl, max: 1 }), (error) => options.log?.('command results purge connection lost', { error: error.message }));
    this.retentionMs = options.retentionMs ?? COMMAND_RESULTS_RETENTION_MS;
    this.worker = new JobWorker<PurgeBatch>({
      name: 'command results purge',
      clock: options.clock,
      pollMs: options.pollMs ?? PURGE_POLL_MS,
      claim: async (_limit, now) => {
        const cutoff = new Date(now.getTime() - this.retentionMs);
        const { rowCount } = await this.pool.query(`SELECT 1 FROM ${COMMAND_RESULTS_TABLE} WHERE created_at < $1 LIMIT 1 FOR UPDATE SKIP LOCKED`, [cutoff]);
        return rowCount ? [{ cutoff }] : [];
      },
      run: async ({ cutoff }) => {
        const { rowCount } = await this.pool.query(
          `DELETE FROM ${COMMAND_RESULTS_TABLE} WHERE ctid IN (
             SELECT ctid FROM ${COMMAND_RESULTS_TABLE} WHERE created_at < $1 LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`,
          [cutoff],
        );
        options.log?.('command results purged', { count: rowCount ?? 0 });
      },
      nextDueAt: async () => {
        const { rows } = await this.pool.query<{ oldest: Date | null }>(`SELECT min(created_at) AS oldest FROM ${COMMAND_RESULTS_TABLE}`);
        return rows[0].oldest ? new Date(rows[0].oldest.getTime() + this.retentionMs) : null;
      },
      log: options.log,
    });
  }

  start(): Promise<void> {
    return this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
    await this.pool.end();
  }
}
