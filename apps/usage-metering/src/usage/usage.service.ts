import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, DomainError, invalidArgument, isDomainError, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { USAGE_BATCH_MAX } from '@recur/vocabulary';
import { SubscriptionViewsRepository } from '../subscriptions/subscription-views.repository';
import {
  checkUsageInput,
  checkUsageLimit,
  crossedThresholds,
  effectiveLimit,
  idempotencyKeyReused,
  type LimitSource,
  meteredComponent,
  type Period,
  type Placement,
  placementOnReceipt,
  placeRecord,
  sameRecord,
  type SubscriptionView,
  type UsageAlert,
  type UsageInput,
  type UsageRecord,
} from './usage';
import { translateUsageAlert } from './usage-events.translator';
import { type IngestOutcome, type IngestRecord, newAlertId, newRecordId, type Tx, UsageRepository, type WatchedLimit } from './usage.repository';

/** The outcome of one record: stored, replayed (its key held the same record), or refused. */
export interface RecordOutcome {
  record?: UsageRecord;
  replayed: boolean;
  error?: DomainError;
}

export interface MetricSummary {
  metricName: string;
  total: bigint;
  limit: bigint | null;
  limitSource: LimitSource;
  includedQuantity: number;
}

export interface UsageSummary {
  subscription: SubscriptionView;
  period: Period;
  metrics: MetricSummary[];
}

/** A record to store (its position in the call, its new id, where it counts). */
interface Placed extends IngestRecord {
  index: number;
}

const unknownSubscription = (id: string, param: string) => new DomainError('invalid_argument', 'resource_missing', `No such subscription: '${id}'`, param);

/**
 * Records usage, keeps period totals and raises threshold alerts. What it knows of
 * subscriptions is the read model the subscription events feed: recording never calls
 * another service.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly usage: UsageRepository,
    private readonly subscriptions: SubscriptionViewsRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Records one record (`batch` false) or a batch, one outcome per record in order. A malformed
   * record refuses the whole call, storing nothing; a record the rules refuse (unknown
   * subscription, unmetered metric, a key reused with another body, …) is refused alone.
   */
  async record(tenant: TenantRef, inputs: UsageInput[], batch: boolean): Promise<RecordOutcome[]> {
    if (batch && (inputs.length === 0 || inputs.length > USAGE_BATCH_MAX)) throw invalidArgument('records', `records must hold 1 to ${USAGE_BATCH_MAX} records`);
    const prefix = (index: number) => (batch ? `records[${index}].` : '');
    inputs.forEach((input, index) => checkUsageInput(input, prefix(index)));

    const now = this.clock();
    const subscriptionIds = [...new Set(inputs.map((input) => input.subscriptionId))];
    const [views, overrides] = await Promise.all([this.subscriptions.find(tenant, subscriptionIds), this.usage.overrides(tenant, subscriptionIds)]);

    // Every position gets its outcome below: refused here, stored or repeated after the statement.
    const outcomes = new Array<RecordOutcome>(inputs.length);
    const placed: Placed[] = [];
    const onReceipt = new Map<SubscriptionView, Placement>();
    inputs.forEach((input, index) => {
      try {
        const view = views.get(input.subscriptionId);
        if (!view) throw unknownSubscription(input.subscriptionId, `${prefix(index)}subscription`);
        let shared = onReceipt.get(view);
        if (!shared) onReceipt.set(view, (shared = placementOnReceipt(view, now)));
        placed.push({ index, id: newRecordId(), input, placement: placeRecord(view, input, now, prefix(index), shared) });
      } catch (error) {
        if (!isDomainError(error)) throw error;
        outcomes[index] = { replayed: false, error };
      }
    });
    if (placed.length === 0) return outcomes;

    const limitOf = (subscriptionId: string, metricName: string) =>
      effectiveLimit(
        views.get(subscriptionId)!.meteredComponents.find((candidate) => candidate.metricName === metricName),
        overrides.get(`${subscriptionId} ${metricName}`),
      ).limit;
    // One statement committed on its own, unless it would cross an alert threshold: an alert must
    // commit with its total, so that batch (rare: two crossings per metric and period) is refused
    // whole by the statement and recorded again in a transaction with its alerts.
    const watched = new Map<string, WatchedLimit>();
    for (const { input } of placed) {
      const limit = limitOf(input.subscriptionId, input.metricName);
      if (limit !== null) watched.set(`${input.subscriptionId} ${input.metricName}`, { subscriptionId: input.subscriptionId, metricName: input.metricName, limit });
    }
    const stored = await this.usage.withoutTransaction((tx) => this.store(tx, tenant, placed, now, outcomes, prefix, [...watched.values()]));
    if (!stored) {
      await this.usage.transaction(async (tx) => {
        const ingested = (await this.store(tx, tenant, placed, now, outcomes, prefix))!;
        for (const total of ingested.totals) {
          const limit = limitOf(total.subscriptionId, total.metricName);
          if (limit === null) continue;
          for (const threshold of crossedThresholds(total.total - total.added, total.total, limit)) {
            const alert: UsageAlert = {
              id: newAlertId(), tenant, subscriptionId: total.subscriptionId, metricName: total.metricName,
              threshold, usage: total.total, limit, period: total.period, created: now,
            };
            await this.usage.insertAlert(tx, alert, translateUsageAlert(alert));
          }
        }
      });
    }
    return outcomes;
  }

  /**
   * Runs the ingest statement and gives each placed record its outcome; with `watched` limits,
   * answers undefined (and stores nothing) when the statement would cross one of their thresholds.
   */
  private async store(tx: Tx, tenant: TenantRef, placed: Placed[], now: Date, outcomes: RecordOutcome[], prefix: (index: number) => string, watched: WatchedLimit[] = []): Promise<IngestOutcome | undefined> {
    const ingested = await this.usage.ingest(tx, tenant, placed, now, watched);
    if (!ingested) return undefined;
    const { skipped } = ingested;
    if (skipped.size > 0) await this.answerRepeats(tx, tenant, placed.filter(({ id }) => skipped.has(id)), outcomes, prefix);
    for (const { id, index, input, placement } of placed) if (!skipped.has(id)) outcomes[index] = { replayed: false, record: toRecord(tenant, id, input, placement, now) };
    return ingested;
  }

  /** Records whose key was taken: the original when the body is the same, else `idempotency_key_reused`. */
  private async answerRepeats(tx: Tx, tenant: TenantRef, repeats: Placed[], outcomes: RecordOutcome[], prefix: (index: number) => string): Promise<void> {
    if (repeats.length === 0) return;
    const existing = await this.usage.findByKeys(tx, tenant, repeats.map(({ input }) => input));
    const byKey = new Map(existing.map((record) => [`${record.subscriptionId} ${record.idempotencyKey}`, record]));
    for (const { index, input } of repeats) {
      const stored = byKey.get(`${input.subscriptionId} ${input.idempotencyKey}`)!;
      outcomes[index] = sameRecord(stored, input) ? { record: stored, replayed: true } : { replayed: false, error: idempotencyKeyReused(input.idempotencyKey, `${prefix(index)}idempotency_key`) };
    }
  }

  list(tenant: TenantRef, page: Page, filter: { subscriptionId: string; metricName?: string; periodStart?: Date }): Promise<{ records: UsageRecord[]; page: PageInfo }> {
    return this.usage.listRecords(tenant, page, filter);
  }

  listAlerts(tenant: TenantRef, page: Page, filter: { subscriptionId?: string }): Promise<{ alerts: UsageAlert[]; page: PageInfo }> {
    return this.usage.listAlerts(tenant, page, filter);
  }

  /**
   * A period's totals per metric (the current period by default): every metric the plan meters,
   * and any other metric that has usage in the period. The period's end is known for the current
   * and the previous period; for an older start it is answered as the start (unknown here).
   */
  async summary(tenant: TenantRef, subscriptionId: string, periodStart?: Date): Promise<UsageSummary> {
    const view = (await this.subscriptions.find(tenant, [subscriptionId])).get(subscriptionId);
    // A query field naming an unknown id, as a body field would: 400, not a missing route's 404.
    if (!view) throw unknownSubscription(subscriptionId, 'subscription');
    const period = periodOf(view, periodStart);
    const [totals, overrides] = await Promise.all([this.usage.totals(tenant, subscriptionId, period.start), this.usage.overrides(tenant, [subscriptionId])]);
    const metricNames = [...new Set([...view.meteredComponents.map((component) => component.metricName), ...totals.keys()])].sort();
    return {
      subscription: view,
      period,
      metrics: metricNames.map((metricName) => {
        const component = view.meteredComponents.find((candidate) => candidate.metricName === metricName);
        const { limit, source } = effectiveLimit(component, overrides.get(`${subscriptionId} ${metricName}`));
        return { metricName, total: totals.get(metricName) ?? 0n, limit, limitSource: source, includedQuantity: component?.includedQuantity ?? 0 };
      }),
    };
  }

  /** Sets (or, with `undefined`, removes) a subscription's own limit of a metric its plan meters. */
  async setLimit(tenant: TenantRef, subscriptionId: string, metricName: string, limit: number | undefined): Promise<{ limit: bigint | undefined; updated: Date }> {
    if (limit !== undefined) checkUsageLimit(limit);
    const view = (await this.subscriptions.find(tenant, [subscriptionId])).get(subscriptionId);
    if (!view) throw unknownSubscription(subscriptionId, 'subscription');
    meteredComponent(view, metricName);
    const now = this.clock();
    const value = limit === undefined ? undefined : BigInt(limit);
    await this.usage.setLimit(tenant, subscriptionId, metricName, value, now);
    return { limit: value, updated: now };
  }
}

function periodOf(view: SubscriptionView, start: Date | undefined): Period {
  if (start === undefined || start.getTime() === view.currentPeriod.start.getTime()) return view.currentPeriod;
  if (view.previousPeriod && start.getTime() === view.previousPeriod.start.getTime()) return view.previousPeriod;
  return { start, end: start };
}

const toRecord = (tenant: TenantRef, id: string, input: UsageInput, placement: Placement, created: Date): UsageRecord => ({
  id,
  tenant,
  subscriptionId: input.subscriptionId,
  metricName: input.metricName,
  quantity: input.quantity,
  idempotencyKey: input.idempotencyKey,
  timestamp: placement.timestampAt,
  timestampGiven: placement.timestampGiven,
  period: placement.period,
  created,
});
