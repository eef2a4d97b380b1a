import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, fromGrpcError, type ServiceClient, toTenantMessage, usageMeteringV1 } from '@recur/contracts';
import { type TenantRef, unixSeconds } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { BILLING_INTERVALS, type BillingInterval } from '@recur/pricing';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';
import type { PeriodUsage } from '../subscriptions/subscription';

/** A batch's usage is a few indexed reads per subscription; a slow answer retries the batch later. */
const USAGE_TIMEOUT_MS = 10_000;

/** One subscription period whose usage an invoice bills; `billingKey` null for a preview (nothing recorded). */
export interface UsageQuery {
  tenant: TenantRef;
  subscriptionId: string;
  period: { start: Date; end: Date };
  /** The interval the period ran on: recorded with the billing, answered on its lines. */
  billingInterval: BillingInterval;
  metricNames: string[];
  billingKey: string | null;
}

/** What the billing clock and the upcoming-invoice preview ask of usage-metering. */
export interface BillingUsage {
  /** The usage each query bills (one answer per query, in order): one call for the whole batch. */
  periodUsage(queries: UsageQuery[]): Promise<PeriodUsage[]>;
}

/** An interval usage-metering answered; '' (a billing recorded before it kept one) or an unknown name: null. */
const intervalOf = (name: string): BillingInterval | null => ((BILLING_INTERVALS as string[]).includes(name) ? (name as BillingInterval) : null);

/** `UsageMeteringService.GetPeriodUsage`, a batch per call. */
@Injectable()
export class UsageMeteringClient implements BillingUsage, OnModuleDestroy {
  private readonly client: ServiceClient<typeof usageMeteringV1.UsageMeteringService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(usageMeteringV1.UsageMeteringService, config.usageMeteringAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  async periodUsage(queries: UsageQuery[]): Promise<PeriodUsage[]> {
    if (queries.length === 0) return [];
    // As a DomainError: an outage answers the API's caller 503 service_unavailable, not 500.
    const { results } = await this.client.getPeriodUsage({
      queries: queries.map((query) => ({
        tenant: toTenantMessage(query.tenant),
        subscriptionId: query.subscriptionId,
        periodStart: BigInt(unixSeconds(query.period.start)),
        periodEnd: BigInt(unixSeconds(query.period.end)),
        metricNames: query.metricNames,
        billingKey: query.billingKey ?? '',
        billingInterval: query.billingInterval,
      })),
    }, { timeoutMs: USAGE_TIMEOUT_MS }).catch((error: unknown) => {
      throw fromGrpcError(error);
    });
    return queries.map((query, index) =>
      (results[index]?.lines ?? []).map((line) => ({
        metricName: line.metricName,
        period: { start: new Date(Number(line.periodStart) * 1000), end: new Date(Number(line.periodEnd) * 1000) },
        quantity: fromInt64(line.quantity, 'quantity'),
        billedBefore: fromInt64(line.billedBefore, 'billed_before'),
        late: line.late,
        interval: intervalOf(line.billingInterval) ?? (line.late ? null : query.billingInterval),
      })),
    );
  }
}
