import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, invalidArgument } from '@recur/kernel';
import { checkPeriodUsageQuery, PERIOD_USAGE_QUERIES_MAX, type PeriodUsageLine, type PeriodUsageQuery, usageToBill } from './period-usage';
import { PeriodUsageRepository } from './period-usage.repository';

/**
 * The usage invoices bill in arrears (docs/api/usage.md#billing-in-arrears). A billing (with a key) runs in
 * one transaction per subscription under a lock of that subscription's billings: a key that
 * billed already answers its recorded lines; otherwise the lines are measured (totals less
 * what was billed) and recorded under the key. A preview measures the same way and records nothing.
 */
@Injectable()
export class PeriodUsageService {
  constructor(
    private readonly billings: PeriodUsageRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async periodUsage(queries: PeriodUsageQuery[]): Promise<PeriodUsageLine[][]> {
    if (queries.length > PERIOD_USAGE_QUERIES_MAX) throw invalidArgument('queries', `at most ${PERIOD_USAGE_QUERIES_MAX} queries per call`);
    queries.forEach(checkPeriodUsageQuery);
    const results: PeriodUsageLine[][] = [];
    for (const query of queries) results.push(query.billingKey === null ? await this.measure(this.billings.pool, query) : await this.bill(query, query.billingKey));
    return results;
  }

  private bill(query: PeriodUsageQuery, billingKey: string): Promise<PeriodUsageLine[]> {
    return this.billings.transaction(async (db) => {
      await this.billings.lockSubscription(db, query.tenant, query.subscriptionId);
      const recorded = await this.billings.billedUnder(db, query.tenant, query.subscriptionId, billingKey);
      if (recorded.length > 0) return recorded;
      const lines = await this.measure(db, query);
      await this.billings.record(db, query.tenant, query.subscriptionId, billingKey, lines, this.clock());
      return lines;
    });
  }

  private async measure(db: Parameters<PeriodUsageRepository['billed']>[0], query: PeriodUsageQuery): Promise<PeriodUsageLine[]> {
    const billed = await this.billings.billed(db, query.tenant, query.subscriptionId);
    const starts = [query.period.start, ...billed.map((entry) => entry.period.start)];
    const totals = await this.billings.totals(db, query.tenant, query.subscriptionId, starts);
    return usageToBill(query, billed, totals);
  }
}
