import { Inject, Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import { type OpenTransaction, statementsOf } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { TtlCache } from '../infrastructure/ttl-cache';
import type { MeteredComponent, SubscriptionView } from '../usage/usage';

/** A subscription_views row as `pg` reads it. */
interface ViewRow {
  id: string;
  account_id: string;
  livemode: boolean;
  status: string;
  current_period_start: Date;
  current_period_end: Date;
  previous_period_start: Date | null;
  previous_period_end: Date | null;
  period_learned_at: Date;
  metered_components: { metric_name: string; included_quantity: string; usage_limit: string | null }[];
  on_test_clock: boolean;
}

const fromViewRow = (row: ViewRow): SubscriptionView => ({
  id: row.id,
  tenant: { accountId: row.account_id, livemode: row.livemode },
  status: row.status,
  currentPeriod: { start: row.current_period_start, end: row.current_period_end },
  previousPeriod: row.previous_period_start && row.previous_period_end ? { start: row.previous_period_start, end: row.previous_period_end } : null,
  periodLearnedAt: row.period_learned_at,
  meteredComponents: row.metered_components.map((component) => ({
    metricName: component.metric_name,
    includedQuantity: Number(component.included_quantity),
    usageLimit: component.usage_limit === null ? null : BigInt(component.usage_limit),
  })),
  onTestClock: row.on_test_clock,
});

/** A subscription as its latest event describes it. */
export interface SubscriptionFacts {
  id: string;
  tenant: TenantRef;
  status: string;
  currentPeriod: { start: Date; end: Date };
  meteredComponents: MeteredComponent[];
  onTestClock: boolean;
  /** The subscription's own `updated`, unix seconds: orders the facts. */
  updated: bigint;
}

/**
 * Upserts views unless they already hold newer facts, one row per subscription (the arrays of
 * $1–$6 and $8–$10, learnedAt $7). When the current period moves, the old one becomes the previous
 * period and its grace window starts now (`learnedAt`).
 */
const UPSERT_VIEWS = `
  INSERT INTO subscription_views AS v (id, account_id, livemode, status, current_period_start, current_period_end, previous_period_start, previous_period_end,
                                       period_learned_at, metered_components, on_test_clock, source_updated)
  SELECT id, account_id, livemode, status, current_period_start, current_period_end, NULL, NULL, $7, metered_components, on_test_clock, source_updated
  FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::timestamptz[], $6::timestamptz[], $8::jsonb[], $9::boolean[], $10::bigint[])
    AS facts (id, account_id, livemode, status, current_period_start, current_period_end, metered_components, on_test_clock, source_updated)
  ON CONFLICT (id) DO UPDATE SET
    status = excluded.status,
    previous_period_start = CASE WHEN v.current_period_start <> excluded.current_period_start THEN v.current_period_start ELSE v.previous_period_start END,
    previous_period_end = CASE WHEN v.current_period_start <> excluded.current_period_start THEN v.current_period_end ELSE v.previous_period_end END,
    period_learned_at = CASE WHEN v.current_period_start <> excluded.current_period_start THEN excluded.period_learned_at ELSE v.period_learned_at END,
    current_period_start = excluded.current_period_start,
    current_period_end = excluded.current_period_end,
    metered_components = excluded.metered_components,
    on_test_clock = excluded.on_test_clock,
    source_updated = excluded.source_updated
  WHERE v.account_id = excluded.account_id AND v.livemode = excluded.livemode AND v.source_updated <= excluded.source_updated`;

/**
 * The facts in rounds, each one statement's worth: the n-th facts of every subscription in round
 * n (an upsert cannot touch a row twice), so each subscription's facts apply one after the other,
 * in order, and a period moved twice keeps the middle one as the previous period.
 */
export function upsertRounds(facts: readonly SubscriptionFacts[]): SubscriptionFacts[][] {
  const rounds: SubscriptionFacts[][] = [];
  const seen = new Map<string, number>();
  for (const fact of facts) {
    const round = seen.get(fact.id) ?? 0;
    seen.set(fact.id, round + 1);
    (rounds[round] ??= []).push(fact);
  }
  return rounds;
}

/** How long the ingest path keeps what it read of a subscription and its limits (docs/api/usage.md#consistency). */
export const USAGE_CACHE_MS = Symbol('USAGE_CACHE_MS');

const cacheKey = (tenant: TenantRef, id: string) => `${tenant.accountId} ${tenant.livemode} ${id}`;

/**
 * What usage-metering knows of subscriptions: a read model fed by the subscription service's
 * events. Reads go through a short-lived cache (USAGE_CACHE_MS); this replica forgets an entry
 * as soon as it applies an event of that subscription, other replicas within the cache's life.
 */
@Injectable()
export class SubscriptionViewsRepository {
  private readonly cache: TtlCache<SubscriptionView>;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(USAGE_CACHE_MS) cacheMs: number,
  ) {
    this.cache = new TtlCache(cacheMs);
  }

  async find(tenant: TenantRef, ids: string[]): Promise<Map<string, SubscriptionView>> {
    const found = new Map<string, SubscriptionView>();
    for (const id of ids) {
      const cached = this.cache.get(cacheKey(tenant, id));
      if (cached) found.set(id, cached);
    }
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length === 0) return found;
    const { rows } = await this.prisma.pool.query<ViewRow>(
      `SELECT id, account_id, livemode, status, current_period_start, current_period_end, previous_period_start, previous_period_end, period_learned_at, metered_components, on_test_clock
         FROM subscription_views WHERE account_id = $1 AND livemode = $2 AND id = ANY($3::text[])`,
      [tenant.accountId, tenant.livemode, missing],
    );
    for (const row of rows) {
      const view = fromViewRow(row);
      this.cache.set(cacheKey(tenant, row.id), view);
      found.set(row.id, view);
    }
    return found;
  }

  /** Drops this replica's cached view, once a change of it committed. */
  forget(tenant: TenantRef, id: string): void {
    this.cache.delete(cacheKey(tenant, id));
  }

  /** Applies the facts in order (a subscription's later facts after its earlier ones), one statement per round (upsertRounds). */
  async saveAll(tx: OpenTransaction, facts: readonly SubscriptionFacts[], learnedAt: Date): Promise<void> {
    const statements = statementsOf(tx);
    for (const round of upsertRounds(facts)) {
      await statements.execute(UPSERT_VIEWS, [
        round.map((fact) => fact.id),
        round.map((fact) => fact.tenant.accountId),
        round.map((fact) => fact.tenant.livemode),
        round.map((fact) => fact.status),
        round.map((fact) => fact.currentPeriod.start),
        round.map((fact) => fact.currentPeriod.end),
        learnedAt,
        round.map((fact) => JSON.stringify(fact.meteredComponents.map((component) => ({
          metric_name: component.metricName,
          included_quantity: String(component.includedQuantity),
          usage_limit: component.usageLimit === null ? null : component.usageLimit.toString(),
        })))),
        round.map((fact) => fact.onTestClock),
        round.map((fact) => fact.updated.toString()),
      ]);
    }
  }
}
