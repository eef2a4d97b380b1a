import { createHash } from 'node:crypto';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { eventsPublished } from '@recur/telemetry';
import { Client, Pool } from 'pg';
import type { BusMessage, EventBus } from './bus';
import { OUTBOX_CHANNEL, OUTBOX_TABLE } from './outbox';

export interface RelayOptions {
  service: string;
  databaseUrl: string;
  bus: EventBus;
  batchSize?: number;
  /** Safety-net poll when no NOTIFY arrives (e.g. a missed wake-up across a reconnect). */
  idlePollMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

const tracer = trace.getTracer('@recur/messaging');

/** A stable 63-bit advisory lock key per table, so only one relay per database publishes. */
const relayLockKey = (): string => BigInt.asIntN(64, BigInt(`0x${createHash('sha256').update(`relay:${OUTBOX_TABLE}`).digest('hex').slice(0, 16)}`)).toString();

/**
 * Publishes unpublished outbox rows in commit order and stamps them, inside one
 * transaction that holds an advisory lock: with several replicas, one relays at a time
 * (order per key is kept); if the process dies after publishing but before the stamp
 * commits, the rows are published again on restart and consumers' inboxes drop them.
 */
export class OutboxRelay {
  private readonly pool: Pool;
  private listener?: Client;
  private running = false;
  private wake?: () => void;
  /** A NOTIFY that came while a batch was being relayed; the next wait is skipped. */
  private notified = false;
  private loop?: Promise<void>;
  /** Fault injection for crash tests: SIGKILL this process after this many publishes, before their stamp. */
  private readonly killAfterPublish = Number(process.env.RECUR_FAULT_RELAY_KILL_AFTER_PUBLISH ?? 0);
  private publishes = 0;

  constructor(private readonly options: RelayOptions) {
    this.pool = new Pool({ connectionString: options.databaseUrl, max: 2 });
  }

  async start(): Promise<void> {
    this.running = true;
    await this.listen();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
    await this.pool.end();
  }

  private async listen(): Promise<void> {
    const listener = new Client({ connectionString: this.options.databaseUrl });
    listener.on('notification', () => {
      this.notified = true;
      this.wake?.();
    });
    listener.on('error', () => {
      // The idle poll covers the gap; reconnect on the next cycle.
      this.listener = undefined;
    });
    await listener.connect();
    await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
    this.listener = listener;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.notified = false;
      let relayed = 0;
      try {
        if (!this.listener) await this.listen();
        relayed = await this.relayBatch();
        failures = 0;
      } catch (error) {
        failures += 1;
        this.options.log?.('outbox relay failed; will retry', { error: (error as Error).message, failures });
      }
      if (relayed > 0 || (this.notified && failures === 0)) continue;
      const backoff = failures > 0 ? Math.min(200 * 2 ** failures, 10_000) : (this.options.idlePollMs ?? 1_000);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Relays one batch; returns how many rows it published. */
  async relayBatch(): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const lock = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS locked', [relayLockKey()]);
      if (!lock.rows[0].locked) {
        await client.query('ROLLBACK');
        return 0;
      }
      const { rows } = await client.query<{ id: string; topic: string; key: string; payload: unknown; headers: Record<string, string> }>(
        `SELECT id, topic, key, payload, headers FROM ${OUTBOX_TABLE} WHERE published_at IS NULL ORDER BY seq LIMIT $1`,
        [this.options.batchSize ?? 200],
      );
      if (rows.length === 0) {
        await client.query('COMMIT');
        return 0;
      }
      const messages: BusMessage[] = rows.map((row) => ({
        topic: row.topic,
        key: row.key,
        value: JSON.stringify(row.payload),
        headers: row.headers,
      }));
      await this.publishTraced(messages);
      this.publishes += 1;
      if (this.killAfterPublish > 0 && this.publishes >= this.killAfterPublish) process.kill(process.pid, 'SIGKILL');
      await client.query(`UPDATE ${OUTBOX_TABLE} SET published_at = now() WHERE id = ANY($1::text[])`, [rows.map((row) => row.id)]);
      await client.query('COMMIT');
      for (const message of messages) eventsPublished.inc({ service: this.options.service, topic: message.topic });
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
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
