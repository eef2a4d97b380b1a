import { Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import { PgTransactions, type SqlStatements } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { type BilledUsage, type PeriodUsageLine, totalsKey } from './period-usage';

type Db = SqlStatements;

interface LineRow {
  metric_name: string;
  period_start: Date;
  period_end: Date;
  quantity: string;
  billed_before: string;
  late: boolean;
  billing_interval: string | null;
}

const fromLineRow = (row: LineRow): PeriodUsageLine => ({
  metricName: row.metric_name,
  period: { start: row.period_start, end: row.period_end },
  quantity: BigInt(row.quantity),
  billedBefore: BigInt(row.billed_before),
  late: row.late,
  billingInterval: row.billing_interval,
});

/** usage_billings (what invoices billed of each period's usage) and the totals they are measured against. */
@Injectable()
export class PeriodUsageRepository {
  private readonly transactions: PgTransactions;

  constructor(private readonly prisma: PrismaService) {
    this.transactions = new PgTransactions(prisma.pool);
  }

  /** Runs `work` in one transaction on plain `pg` (Prisma's own pool). */
  transaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.transactions.transaction(work);
  }

  /** Statements outside a transaction (a preview's measure), on the same pool. */
  get pool(): Db {
    const pool = this.prisma.pool;
    return {
      query: async <Row>(sql: string, values: unknown[]) => (await pool.query(sql, values)).rows as Row[],
      execute: async (sql: string, values: unknown[]) => void (await pool.query(sql, values)),
    };
  }

  /**
   * Serialises the billings of one subscription until the transaction ends (two replicas
   * billing the same step, a retry racing its original). Ingest takes no such lock: a record
   * committing meanwhile is simply not in this billing's totals, and the next one bills it.
   */
  async lockSubscription(db: Db, tenant: TenantRef, subscriptionId: string): Promise<void> {
    await db.execute(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`usage-billing ${tenant.accountId} ${tenant.livemode} ${subscriptionId}`]);
  }

  /** The lines a billing recorded, or none if the key has not billed. */
  async billedUnder(db: Db, tenant: TenantRef, subscriptionId: string, billingKey: string): Promise<PeriodUsageLine[]> {
    const rows = await db.query<LineRow>(
      `SELECT metric_name, period_start, period_end, quantity::text, billed_before::text, late, billing_interval FROM usage_billings
        WHERE account_id = $1 AND livemode = $2 AND subscription_id = $3 AND billing_key = $4
        ORDER BY late, period_start, metric_name`,
      [tenant.accountId, tenant.livemode, subscriptionId, billingKey],
    );
    return rows.map(fromLineRow);
  }

  /** What all billings so far took of each metric and period of the subscription. */
  async billed(db: Db, tenant: TenantRef, subscriptionId: string): Promise<BilledUsage[]> {
    // Every billing of a period records the interval it ran on (its first billing's, on late lines).
    const rows = await db.query<{ metric_name: string; period_start: Date; period_end: Date; billed: string; billing_interval: string | null }>(
      `SELECT metric_name, period_start, max(period_end) AS period_end, sum(quantity)::text AS billed, max(billing_interval) AS billing_interval FROM usage_billings
        WHERE account_id = $1 AND livemode = $2 AND subscription_id = $3
        GROUP BY metric_name, period_start`,
      [tenant.accountId, tenant.livemode, subscriptionId],
    );
    return rows.map((row) => ({ metricName: row.metric_name, period: { start: row.period_start, end: row.period_end }, billed: BigInt(row.billed), billingInterval: row.billing_interval }));
  }

  /** The subscription's totals of the given period starts, keyed by totalsKey. */
  async totals(db: Db, tenant: TenantRef, subscriptionId: string, periodStarts: Date[]): Promise<Map<string, bigint>> {
    const rows = await db.query<{ metric_name: string; period_start: Date; total: string }>(
      `SELECT metric_name, period_start, sum(total)::text AS total FROM usage_totals
        WHERE account_id = $1 AND livemode = $2 AND subscription_id = $3 AND period_start = ANY($4::timestamptz[])
        GROUP BY metric_name, period_start`,
      [tenant.accountId, tenant.livemode, subscriptionId, periodStarts],
    );
    return new Map(rows.map((row) => [totalsKey(row.metric_name, row.period_start), BigInt(row.total)]));
  }

  /** Records a billing's lines under its key. */
  async record(db: Db, tenant: TenantRef, subscriptionId: string, billingKey: string, lines: PeriodUsageLine[], now: Date): Promise<void> {
    if (lines.length === 0) return;
    await db.execute(
      `INSERT INTO usage_billings (account_id, livemode, subscription_id, billing_key, metric_name, period_start, period_end, quantity, billed_before, late, created_at, billing_interval)
       SELECT $1, $2, $3, $4, l.metric_name, l.period_start, l.period_end, l.quantity, l.billed_before, l.late, $10, l.billing_interval
         FROM unnest($5::text[], $6::timestamptz[], $7::timestamptz[], $8::bigint[], $9::bigint[], $11::boolean[], $12::text[])
           AS l(metric_name, period_start, period_end, quantity, billed_before, late, billing_interval)`,
      [
        tenant.accountId, tenant.livemode, subscriptionId, billingKey,
        lines.map((line) => line.metricName), lines.map((line) => line.period.start), lines.map((line) => line.period.end),
        lines.map((line) => line.quantity.toString()), lines.map((line) => line.billedBefore.toString()), now, lines.map((line) => line.late),
        lines.map((line) => line.billingInterval),
      ],
    );
  }
}
