import { createHash } from 'node:crypto';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { JobWorker } from '@recur/jobs';
import type { Clock } from '@recur/kernel';
import { eventsPublished, outboxRowsPurged } from '@recur/telemetry';
import { INDEX_SCANS_ONLY, sqlLiteral } from '@recur/persistence';
import { Pool, type PoolClient, type QueryResult } from 'pg';
import type { BusMessage, EventBus } from './bus';
import { defaultTopicMap, type EventRoute, type TopicMap } from './event';
import { OUTBOX_CHANNEL, OUTBOX_TABLE } from './outbox';

export interface RelayOptions {
  service: string;
  databaseUrl: string;
  bus: EventBus;
  /** Stamps `published_at`. */
  clock: Clock;
  /** Where each row goes, resolved when it is published; default defaultTopicMap. */
  topics?: TopicMap;
  /** Rows published (one Kafka produce request) and stamped per transaction; default DEFAULT_RELAY_BATCH_SIZE. */
  batchSize?: number;
  /** How long a published row stays in the outbox before the relay deletes it; default DEFAULT_OUTBOX_RETENTION_MS. */
  retentionMs?: number;
  /** Safety-net poll when no NOTIFY arrives (e.g. a missed wake-up across a reconnect). */
  idlePollMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/**
 * Test only (docs/operations/configuration.md): `RECUR_FAULT_RELAY_KILL_AFTER_PUBLISH=<n>` makes the
 * process kill itself with SIGKILL after its relay's n-th published batch, before the stamp
 * commits, so crash tests can prove such a batch is published again and consumed once.
 */
export const FAULT_KILL_AFTER_PUBLISH = 'RECUR_FAULT_RELAY_KILL_AFTER_PUBLISH';

function killAfterPublishFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env[FAULT_KILL_AFTER_PUBLISH]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Rows per batch. A batch costs a transaction, a produce request and an acknowledgement
 * whatever its size, so bigger batches drain faster (docs/performance.md); the lock
 * and the open transaction are held only while one is published.
 */
export const DEFAULT_RELAY_BATCH_SIZE = 1000;

/**
 * The next `limit` unpublished rows in commit order, read only by a transaction that holds the
 * relay lock: the gate (an uncorrelated subquery, so PostgreSQL evaluates it once, before the scan)
 * takes the lock again, which answers true to its holder and false while another relay holds it.
 * It walks the partial index on `seq WHERE published_at IS NULL` (every service's outbox
 * migration), so its cost follows the backlog, not the rows already stamped. The payload is read as
 * its stored JSON text: published unchanged, without a parse and a re-stringify.
 */
export function unpublishedBatchSql(limit: number): string {
  return `SELECT id, topic, producer, kind, type, key, payload::text AS value, headers FROM ${OUTBOX_TABLE}
   WHERE published_at IS NULL AND (SELECT pg_try_advisory_xact_lock(${OUTBOX_RELAY_LOCK_KEY}))
   ORDER BY seq LIMIT ${Math.trunc(limit)}`;
}

/**
 * How long a published row is kept: 24 hours (OUTBOX_RETENTION_HOURS). Once stamped, a row is
 * needed by nothing (a crash before the stamp republishes from the row; after it, Kafka holds the
 * message for its own retention, 7 days by default), so it stays only as a day's record to read in
 * SQL — what a service published, and when — while an incident is looked into. (Debezium's
 * outbox pattern keeps none: it reads the write-ahead log, so rows may be deleted at once; a
 * polling relay like this one needs each row only until it is stamped.)
 */
export const DEFAULT_OUTBOX_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes the published rows older than $1 among the $2 oldest rows. It reads only those oldest
 * rows, through the primary key (seq), so each purge costs the same however large the outbox is, and
 * needs no index on published_at. The relay stamps rows in seq order, so expired rows are the oldest
 * ones; an unpublished row (published_at NULL) is never deleted.
 */
export const PURGE_PUBLISHED_SQL = `DELETE FROM ${OUTBOX_TABLE} WHERE seq IN (
  SELECT seq FROM (SELECT seq, published_at FROM ${OUTBOX_TABLE} ORDER BY seq LIMIT $2) AS oldest
   WHERE published_at IS NOT NULL AND published_at < $1)`;

/** Rows a purge looks at, and at most deletes, in one transaction. */
export const OUTBOX_PURGE_BATCH_SIZE = 1000;

/** After a purge that left nothing expired, the next one comes this much later. */
const PURGE_INTERVAL_MS = 60_000;

/** Unpublished outbox rows, read under the relay lock by a transaction still open on `client`. */
interface OutboxBatch {
  client: PoolClient;
  /** Returns the connection to the pool (discarding it after an error). */
  release(error?: Error): void;
  rows: OutboxBatchRow[];
}

interface OutboxBatchRow {
  id: string;
  /** The topic of the map the writer ran with: where a row without a producer goes. */
  topic: string;
  producer: string | null;
  kind: EventRoute['kind'] | null;
  type: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * A row's topic, from the map the relay runs now. A row written by a release before topic
 * resolution has no producer (expand/contract: the column came later) and goes where it says.
 */
export function resolveTopic(row: Pick<OutboxBatchRow, 'topic' | 'producer' | 'kind' | 'type'>, topics: TopicMap = defaultTopicMap): string {
  return row.producer && row.kind ? topics({ producer: row.producer, kind: row.kind, type: row.type }) : row.topic;
}

const tracer = trace.getTracer('@recur/messaging');

/**
 * The advisory lock a relay holds while it publishes: a stable 63-bit key per table, so only one
 * relay per database publishes. Tests hold it to keep outbox rows unpublished.
 */
export const OUTBOX_RELAY_LOCK_KEY = BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(`relay:${OUTBOX_TABLE}`).digest('hex').slice(0, 16)}`)).toString();

/**
 * A batch's claim, in one round trip (a simple query of three statements): opens the transaction,
 * takes the relay lock and reads the next rows, each statement under a snapshot taken after the one
 * before it, so the rows read are those left after the previous holder's stamp committed. The
 * caller uses the rows only when the lock statement answered true.
 *
 * The transaction's commit also returns before its WAL is flushed (`synchronous_commit` off for it
 * alone): a stamp or a purge needs no durability of its own. A stamp lost in a database crash only
 * has its rows published again, which consumers' inboxes drop (as after a relay crash), and a lost
 * purge runs again. Waiting for the flush made every batch's stamp a disk sync that the commits of
 * requests queued behind when the disk was slow (`npm run bench` counts WAL flushes per request).
 *
 * The read walks the partial index of unpublished rows in `seq` order (INDEX_SCANS_ONLY, as
 * `queryByIndexScans` runs the job claims, which says why; the purge that may follow walks the
 * primary key in `seq` order anyway). Each stamp leaves a dead entry in that index until a vacuum;
 * the bitmap scan the planner chose read them all on every claim (7 778 entries and 965 pages per
 * claim in a bench run).
 */
export function claimBatchSql(limit: number): string {
  return `BEGIN;
    SELECT pg_try_advisory_xact_lock(${OUTBOX_RELAY_LOCK_KEY}) AS locked, set_config('synchronous_commit', 'off', true), ${INDEX_SCANS_ONLY};
    ${unpublishedBatchSql(limit)}`;
}

/** Stamps the published rows and commits, in one round trip; the ids and time go in as literals. */
function stampAndCommitSql(ids: readonly string[], publishedAt: Date): string {
  return `UPDATE ${OUTBOX_TABLE} SET published_at = ${sqlLiteral(publishedAt)}
   WHERE id IN (${ids.map(sqlLiteral).join(', ')}); COMMIT`;
}

/** A full purge batch was deleted: more may have expired, so the relay looks again at once. */
interface PurgedBatch {
  purged: number;
}

/**
 * Publishes unpublished outbox rows in commit order and stamps them, inside one
 * transaction that holds an advisory lock: with several replicas, one relays at a time
 * (order per key is kept); if the process dies after publishing but before the stamp
 * commits, the rows are published again on restart and consumers' inboxes drop them.
 * The wake-ups, safety poll, failure backoff and graceful stop are the JobWorker's, with one
 * job at a time: a batch.
 *
 * The relay also deletes published rows older than the retention, when it holds the lock and has
 * nothing to publish: one replica purges at a time, never while it publishes, and publishing
 * always comes first (each purge batch is a claim that found no unpublished row).
 */
export class OutboxRelay {
  private readonly pool: Pool;
  private readonly worker: JobWorker<OutboxBatch | PurgedBatch>;
  private readonly retentionMs: number;
  /** When this relay next looks for expired rows; now at start. */
  private nextPurgeAt = 0;
  private readonly killAfterPublishes = killAfterPublishFromEnv(process.env);
  private publishedBatches = 0;

  constructor(private readonly options: RelayOptions) {
    this.pool = new Pool({ connectionString: options.databaseUrl, max: 2 });
    // An idle connection the server dropped is discarded by the pool; the next batch opens another.
    this.pool.on('error', (error) => options.log?.('outbox relay connection lost', { error: error.message }));
    this.retentionMs = options.retentionMs ?? DEFAULT_OUTBOX_RETENTION_MS;
    this.worker = new JobWorker<OutboxBatch | PurgedBatch>({
      name: `${options.service} outbox relay`,
      clock: options.clock,
      wakeUp: { databaseUrl: options.databaseUrl, channel: OUTBOX_CHANNEL },
      pollMs: options.idlePollMs,
      claim: async () => {
        const batch = await this.lockNextBatch();
        return batch ? [batch] : [];
      },
      // A purge batch is done when claimed: running it only makes the worker claim again at once.
      run: async (job) => ('rows' in job ? this.publishAndStamp(job) : undefined),
      log: options.log,
    });
  }

  start(): Promise<void> {
    return this.worker.start();
  }

  /** Waits for the batch in flight (published and stamped, or rolled back), then closes. */
  async stop(): Promise<void> {
    await this.worker.stop();
    await this.pool.end();
  }

  /**
   * Opens a transaction, takes the relay lock and reads the next unpublished rows in commit
   * order; with none, purges expired rows instead. Undefined (and nothing held) when another
   * relay holds the lock, or when nothing is due and no full purge batch was deleted.
   */
  private async lockNextBatch(): Promise<OutboxBatch | PurgedBatch | undefined> {
    const client = await this.pool.connect();
    // The server may drop the connection while the batch is published; the failing query reports it.
    const onConnectionError = () => undefined;
    client.on('error', onConnectionError);
    const release = (error?: Error) => {
      client.off('error', onConnectionError);
      client.release(error);
    };
    try {
      // A simple query of several statements answers one result per statement.
      const [, lock, batch] = (await client.query(claimBatchSql(this.options.batchSize ?? DEFAULT_RELAY_BATCH_SIZE))) as unknown as [
        QueryResult,
        QueryResult<{ locked: boolean }>,
        QueryResult<OutboxBatch['rows'][number]>,
      ];
      const locked = lock.rows[0].locked;
      const rows = locked ? batch.rows : [];
      if (rows.length === 0) {
        const purged = locked ? await this.purgeExpired(client) : 0;
        await client.query(purged > 0 ? 'COMMIT' : 'ROLLBACK');
        release();
        return purged === OUTBOX_PURGE_BATCH_SIZE ? { purged } : undefined;
      }
      return { client, release, rows };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      release(error as Error);
      throw error;
    }
  }

  /** Deletes one batch of expired published rows, at most once a PURGE_INTERVAL_MS unless the last batch was full. */
  private async purgeExpired(client: PoolClient): Promise<number> {
    const now = this.options.clock().getTime();
    if (now < this.nextPurgeAt) return 0;
    const { rowCount } = await client.query(PURGE_PUBLISHED_SQL, [new Date(now - this.retentionMs), OUTBOX_PURGE_BATCH_SIZE]);
    const purged = rowCount ?? 0;
    if (purged < OUTBOX_PURGE_BATCH_SIZE) this.nextPurgeAt = now + PURGE_INTERVAL_MS;
    if (purged > 0) {
      outboxRowsPurged.inc({ service: this.options.service }, purged);
      this.options.log?.('outbox rows purged', { count: purged });
    }
    return purged;
  }

  private async publishAndStamp({ client, release, rows }: OutboxBatch): Promise<void> {
    try {
      const messages: BusMessage[] = rows.map((row) => ({ topic: resolveTopic(row, this.options.topics), key: row.key, value: row.value, headers: row.headers }));
      await this.publishTraced(messages);
      this.publishedBatches += 1;
      if (this.publishedBatches === this.killAfterPublishes) process.kill(process.pid, 'SIGKILL');
      await client.query(stampAndCommitSql(rows.map((row) => row.id), this.options.clock()));
      release();
      for (const message of messages) eventsPublished.inc({ service: this.options.service, topic: message.topic });
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      release(error as Error);
      throw error;
    }
  }

  /** One producer span per message, child of the request that wrote it; its context travels on. */
  private async publishTraced(messages: BusMessage[]): Promise<void> {
    const spans = messages.map((message) => {
      const parent = propagation.extract(context.active(), message.headers);
      const span = tracer.startSpan(`${message.topic} publish`, {
        kind: SpanKind.PRODUCER,
        attributes: { 'messaging.system': 'kafka', 'messaging.destination.name': message.topic, 'messaging.message.id': message.headers['event-id'] },
      }, parent);
      const headers = { ...message.headers };
      propagation.inject(trace.setSpan(parent, span), headers);
      message.headers = headers;
      return span;
    });
    try {
      await this.options.bus.publish(messages);
    } finally {
      for (const span of spans) span.end();
    }
  }
}
