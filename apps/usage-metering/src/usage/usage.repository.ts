import { Inject, Injectable } from '@nestjs/common';
import { newId, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import { USAGE_ALERT_THRESHOLDS } from '@recur/vocabulary';
import { appendToOutbox, type OutboxEvent } from '@recur/messaging';
import type { PoolClient } from 'pg';
import { PrismaService } from '../infrastructure/prisma.service';
import { TtlCache } from '../infrastructure/ttl-cache';
import { USAGE_CACHE_MS } from '../subscriptions/subscription-views.repository';
import type { Period, Placement, UsageAlert, UsageInput, UsageRecord } from './usage';
import { fromAlertRow, fromRecordRow, type RecordRow } from './usage.mapper';

/** The producer name of this service's topics (`<namespace>.usage-metering.internal|public`). */
export const PRODUCER = 'usage-metering';

/** One metric total after an ingest statement, with what that statement added to it. */
export interface CountedTotal {
  subscriptionId: string;
  metricName: string;
  period: Period;
  total: bigint;
  /** What this statement's records added: the total before them is `total - added`. */
  added: bigint;
}

export interface IngestOutcome {
  /** The ids of the records this statement did not store: their keys were taken already. */
  skipped: Set<string>;
  totals: CountedTotal[];
}

/** A record to store, with its new id and its placement. */
export interface IngestRecord {
  id: string;
  input: UsageInput;
  placement: Placement;
}

/**
 * The ingest statement: the records (one or a batch) go in with `ON CONFLICT DO NOTHING` on the
 * natural key, in one order for every writer (code points of subscription, then key: concurrent
 * batches take the unique index's locks alike; a key sent twice is stored as its first
 * occurrence, the later ones replay it), and the period totals of the records actually
 * stored are added in the same statement. The totals' row locks are held to the end of the
 * caller's transaction, so increments of one total are serialised and each sees the total
 * before and after it. Plain SQL: Prisma's interactive transaction cost more CPU than the
 * database's work on this path (docs/performance.md). The records travel as one array literal
 * per column (a join, see `textArray`) naming their placement (time, period: one per
 * subscription for records without a timestamp) in a small JSON; the answer names only the
 * records not stored, and the totals with what they gained. Objects and JSON per record, the
 * returned ids and the lock-order sort cost Node.js more than the rest of a batch did;
 * PostgreSQL does them for far less.
 *
 * Run on its own (no transaction: one round trip instead of three), the statement is given the
 * limits that watch its records ($11–$13) and fails whole (`usage_threshold_crossed`, SQLSTATE
 * RU001) when a total it adds to crosses an alert threshold ($14) — the rule of
 * `crossedThresholds`, on the totals as the row locks serialise them — because an alert must
 * commit with its total: the caller then records the batch in a transaction with its alerts.
 * Without limits it never fails so.
 */
export const INGEST_SQL = `
  WITH placement AS (
    SELECT * FROM json_to_recordset($4::json) AS p(n int, ts float8, given boolean, ps float8, pe float8)
  ), input AS (
    SELECT i.position, i.id, i.s AS subscription_id, i.m AS metric_name, i.q AS quantity, i.k AS idempotency_key,
           to_timestamp(p.ts / 1000) AS ts, p.given, to_timestamp(p.ps / 1000) AS period_start, to_timestamp(p.pe / 1000) AS period_end
      FROM unnest($3::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::int[]) WITH ORDINALITY AS i(id, s, m, q, k, n, position) JOIN placement p USING (n)
  ), inserted AS (
    INSERT INTO usage_records (id, account_id, livemode, subscription_id, metric_name, quantity, idempotency_key, "timestamp", timestamp_given, period_start, period_end, created_at)
    SELECT id, $1, $2, subscription_id, metric_name, quantity, idempotency_key, ts, given, period_start, period_end, $10 FROM input
     ORDER BY subscription_id COLLATE "C", idempotency_key COLLATE "C", position
    ON CONFLICT (account_id, livemode, subscription_id, idempotency_key) DO NOTHING
    RETURNING id, subscription_id, metric_name, period_start, period_end, quantity
  ), added AS (
    SELECT subscription_id, metric_name, period_start, period_end, sum(quantity) AS added FROM inserted GROUP BY subscription_id, metric_name, period_start, period_end
  ), counted AS (
    INSERT INTO usage_totals (account_id, livemode, subscription_id, metric_name, period_start, total)
    SELECT $1, $2, subscription_id, metric_name, period_start, added FROM added ORDER BY subscription_id, metric_name, period_start
    ON CONFLICT (account_id, livemode, subscription_id, metric_name, period_start) DO UPDATE SET total = usage_totals.total + excluded.total
    RETURNING subscription_id, metric_name, period_start, total
  ), watched AS (
    SELECT * FROM unnest($11::text[], $12::text[], $13::bigint[]) AS w(subscription_id, metric_name, usage_limit)
  )
  SELECT (SELECT coalesce(string_agg(id, ','), '') FROM input WHERE id NOT IN (SELECT id FROM inserted)) AS skipped,
         (SELECT coalesce(json_agg(json_build_object('s', c.subscription_id, 'm', c.metric_name, 'p', c.period_start, 'e', a.period_end, 't', c.total::text, 'a', a.added::text)), '[]')
            FROM counted c JOIN added a USING (subscription_id, metric_name, period_start)) AS totals,
         (SELECT usage_threshold_crossed() FROM counted c JOIN added a USING (subscription_id, metric_name, period_start) JOIN watched w USING (subscription_id, metric_name)
           WHERE EXISTS (SELECT FROM unnest($14::int[]) AS t(threshold)
                          WHERE NOT (c.total - a.added > 0 AND (c.total - a.added) * 100 >= w.usage_limit * t.threshold)
                            AND c.total > 0 AND c.total * 100 >= w.usage_limit * t.threshold)
           LIMIT 1) AS crossed`;

/**
 * INGEST_SQL as a named statement: each connection parses and plans it once instead of on every
 * call (its planning cost PostgreSQL more CPU than running it for a small batch).
 */
export const INGEST_STATEMENT_NAME = 'usage_ingest';

/**
 * A PostgreSQL array literal of texts, every element quoted (so a text `NULL` stays a text).
 * Values without `"` or `\` — ids, metric names, almost every key — go in one join.
 */
export function textArray(values: string[]): string {
  if (values.length === 0) return '{}';
  if (!/["\\]/.test(values.join(''))) return `{"${values.join('","')}"}`;
  return `{${values.map((value) => `"${value.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/** A limit that watches a subscription's metric: INGEST_SQL refuses to cross its thresholds on its own. */
export interface WatchedLimit {
  subscriptionId: string;
  metricName: string;
  limit: bigint;
}

/** The SQLSTATE of `usage_threshold_crossed`: the statement was refused whole. */
const THRESHOLD_CROSSED = 'RU001';

/** The parameters of INGEST_SQL for records with their new ids, refusing to cross the thresholds of `watched`. */
export function ingestParameters(tenant: TenantRef, records: IngestRecord[], created: Date, watched: WatchedLimit[] = []): unknown[] {
  const numbers = new Map<Placement, number>();
  const placements: { n: number; ts: number; given: boolean; ps: number; pe: number }[] = [];
  const n = records.length;
  const [ids, subscriptions, metrics, keys] = [new Array<string>(n), new Array<string>(n), new Array<string>(n), new Array<string>(n)];
  const [quantities, placementNumbers] = [new Array<number>(n), new Array<number>(n)];
  records.forEach(({ id, input, placement }, index) => {
    let number = numbers.get(placement);
    if (number === undefined) {
      number = placements.length;
      numbers.set(placement, number);
      placements.push({ n: number, ts: placement.timestampAt.getTime(), given: placement.timestampGiven, ps: placement.period.start.getTime(), pe: placement.period.end.getTime() });
    }
    ids[index] = id;
    subscriptions[index] = input.subscriptionId;
    metrics[index] = input.metricName;
    quantities[index] = input.quantity;
    keys[index] = input.idempotencyKey;
    placementNumbers[index] = number;
  });
  return [
    tenant.accountId, tenant.livemode, textArray(ids), JSON.stringify(placements), textArray(subscriptions), textArray(metrics),
    `{${quantities.join(',')}}`, textArray(keys), `{${placementNumbers.join(',')}}`, created,
    textArray(watched.map((limit) => limit.subscriptionId)), textArray(watched.map((limit) => limit.metricName)), `{${watched.map((limit) => limit.limit).join(',')}}`,
    `{${USAGE_ALERT_THRESHOLDS.join(',')}}`,
  ];
}

const RECORD_COLUMNS = `id, account_id, livemode, subscription_id, metric_name, quantity, idempotency_key, "timestamp", timestamp_given, period_start, period_end, created_at`;
const ALERT_COLUMNS = `id, account_id, livemode, subscription_id, metric_name, threshold, usage, "limit", period_start, period_end, created_at`;

/** Where the ingest statements run: a transaction's connection, or the pool (each statement on its own). */
export type Tx = Pick<PoolClient, 'query'>;

/**
 * Usage records, totals, alerts and limit overrides; every query is scoped to one tenant.
 * The write path is plain `pg` on Prisma's own pool; reads go through the same pool.
 */
@Injectable()
export class UsageRepository {
  /** Each subscription's limit overrides by metric, as the ingest path reads them (USAGE_CACHE_MS). */
  private readonly overrideCache: TtlCache<Map<string, bigint>>;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(USAGE_CACHE_MS) cacheMs: number,
  ) {
    this.overrideCache = new TtlCache(cacheMs);
  }

  /** Runs `work` in one transaction on one connection. */
  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await this.prisma.pool.connect();
    // A connection dropped mid-transaction fails the next query; pg's 'error' event on the
    // checked-out client must not end the process (no listener would).
    const ignoreConnectionError = () => undefined;
    client.on('error', ignoreConnectionError);
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      const rolledBack = await client.query('ROLLBACK').then(() => true, () => false);
      // A connection that cannot even roll back is discarded rather than returned to the pool.
      if (!rolledBack) failed = error as Error;
      throw error;
    } finally {
      client.off('error', ignoreConnectionError);
      client.release(failed);
    }
  }

  /**
   * Runs `work` on the pool without a transaction: for an ingest statement that crosses no alert
   * threshold, atomic by itself (one round trip instead of three).
   */
  withoutTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return work(this.prisma.pool);
  }

  /**
   * Stores the records and adds them to their totals; with `watched` limits, answers undefined
   * instead when that would cross one of their thresholds (nothing stored then).
   */
  async ingest(tx: Tx, tenant: TenantRef, records: IngestRecord[], created: Date, watched: WatchedLimit[] = []): Promise<IngestOutcome | undefined> {
    let rows;
    try {
      ({ rows } = await tx.query<{ skipped: string; totals: { s: string; m: string; p: string; e: string; t: string; a: string }[] }>({
        name: INGEST_STATEMENT_NAME, text: INGEST_SQL, values: ingestParameters(tenant, records, created, watched),
      }));
    } catch (error) {
      if ((error as { code?: string }).code === THRESHOLD_CROSSED) return undefined;
      throw error;
    }
    const [row] = rows;
    return {
      skipped: new Set(row.skipped === '' ? [] : row.skipped.split(',')),
      totals: row.totals.map((total) => ({
        subscriptionId: total.s, metricName: total.m, period: { start: new Date(total.p), end: new Date(total.e) }, total: BigInt(total.t), added: BigInt(total.a),
      })),
    };
  }

  /** The records already stored under these keys of one tenant (replays and conflicts). */
  async findByKeys(tx: Tx, tenant: TenantRef, keys: { subscriptionId: string; idempotencyKey: string }[]): Promise<UsageRecord[]> {
    const { rows } = await tx.query<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM usage_records
        WHERE account_id = $1 AND livemode = $2
          AND (subscription_id, idempotency_key) IN (SELECT * FROM unnest($3::text[], $4::text[]))`,
      [tenant.accountId, tenant.livemode, keys.map((key) => key.subscriptionId), keys.map((key) => key.idempotencyKey)],
    );
    return rows.map(fromRecordRow);
  }

  /** The subscriptions' limit overrides, keyed `<subscription> <metric>`. */
  async overrides(tenant: TenantRef, subscriptionIds: string[]): Promise<Map<string, bigint>> {
    const key = (id: string) => `${tenant.accountId} ${tenant.livemode} ${id}`;
    const bySubscription = new Map<string, Map<string, bigint>>();
    for (const id of subscriptionIds) {
      const cached = this.overrideCache.get(key(id));
      if (cached) bySubscription.set(id, cached);
    }
    const missing = subscriptionIds.filter((id) => !bySubscription.has(id));
    if (missing.length > 0) {
      const { rows } = await this.prisma.pool.query<{ subscription_id: string; metric_name: string; limit: string }>(
        `SELECT subscription_id, metric_name, "limit" FROM usage_limits WHERE account_id = $1 AND livemode = $2 AND subscription_id = ANY($3::text[])`,
        [tenant.accountId, tenant.livemode, missing],
      );
      for (const id of missing) bySubscription.set(id, new Map());
      for (const row of rows) bySubscription.get(row.subscription_id)!.set(row.metric_name, BigInt(row.limit));
      for (const id of missing) this.overrideCache.set(key(id), bySubscription.get(id)!);
    }
    const overrides = new Map<string, bigint>();
    for (const [id, limits] of bySubscription) for (const [metric, limit] of limits) overrides.set(`${id} ${metric}`, limit);
    return overrides;
  }

  /** Records the alert unless this threshold of this period already has one; true when recorded. */
  async insertAlert(tx: Tx, alert: UsageAlert, events: OutboxEvent[]): Promise<boolean> {
    const { rowCount } = await tx.query(
      `INSERT INTO usage_alerts (${ALERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (account_id, livemode, subscription_id, metric_name, period_start, threshold) DO NOTHING`,
      [alert.id, alert.tenant.accountId, alert.tenant.livemode, alert.subscriptionId, alert.metricName, alert.threshold, alert.usage, alert.limit, alert.period.start, alert.period.end, alert.created],
    );
    if (rowCount !== 1) return false;
    await appendToOutbox({ $executeRawUnsafe: (query: string, ...values: unknown[]) => tx.query(query, values).then((result) => result.rowCount ?? 0) }, PRODUCER, events);
    return true;
  }

  async listRecords(tenant: TenantRef, page: Page, filter: { subscriptionId: string; metricName?: string; periodStart?: Date }): Promise<{ records: UsageRecord[]; page: PageInfo }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      subscriptionId: filter.subscriptionId,
      ...(filter.metricName === undefined ? {} : { metricName: filter.metricName }),
      ...(filter.periodStart === undefined ? {} : { periodStart: filter.periodStart }),
    };
    const { rows, page: info } = await readListPage(page, {
      resource: 'usage record', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.usageRecord.findMany(read),
      count: (query) => this.prisma.usageRecord.count(query),
    });
    return {
      records: rows.map((row) =>
        fromRecordRow({
          id: row.id, account_id: row.accountId, livemode: row.livemode, subscription_id: row.subscriptionId, metric_name: row.metricName, quantity: row.quantity.toString(),
          idempotency_key: row.idempotencyKey, timestamp: row.timestamp, timestamp_given: row.timestampGiven, period_start: row.periodStart, period_end: row.periodEnd, created_at: row.createdAt,
        }),
      ),
      page: info,
    };
  }

  /** The period's totals of one subscription, by metric. */
  async totals(tenant: TenantRef, subscriptionId: string, periodStart: Date): Promise<Map<string, bigint>> {
    const rows = await this.prisma.usageTotal.findMany({ where: { accountId: tenant.accountId, livemode: tenant.livemode, subscriptionId, periodStart } });
    return new Map(rows.map((row) => [row.metricName, row.total]));
  }

  async listAlerts(tenant: TenantRef, page: Page, filter: { subscriptionId?: string }): Promise<{ alerts: UsageAlert[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(filter.subscriptionId === undefined ? {} : { subscriptionId: filter.subscriptionId }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'usage alert', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.usageAlert.findMany(read),
      count: (query) => this.prisma.usageAlert.count(query),
    });
    return {
      alerts: rows.map((row) =>
        fromAlertRow({
          id: row.id, account_id: row.accountId, livemode: row.livemode, subscription_id: row.subscriptionId, metric_name: row.metricName, threshold: row.threshold,
          usage: row.usage.toString(), limit: row.limit.toString(), period_start: row.periodStart, period_end: row.periodEnd, created_at: row.createdAt,
        }),
      ),
      page: info,
    };
  }

  async setLimit(tenant: TenantRef, subscriptionId: string, metricName: string, limit: bigint | undefined, now: Date): Promise<void> {
    const key = { accountId: tenant.accountId, livemode: tenant.livemode, subscriptionId, metricName };
    if (limit === undefined) {
      await this.prisma.usageLimit.deleteMany({ where: key });
    } else {
      await this.prisma.usageLimit.upsert({
        where: { accountId_livemode_subscriptionId_metricName: key },
        create: { ...key, limit, updatedAt: now },
        update: { limit, updatedAt: now },
      });
    }
    this.overrideCache.delete(`${tenant.accountId} ${tenant.livemode} ${subscriptionId}`);
  }
}

export const newRecordId = (): string => newId('ur');
export const newAlertId = (): string => newId('ualert');
