import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import { catalogV1, createServiceClient, fromGrpcError, type ServiceClient, toTenantMessage } from '@recur/contracts';
import { failedPrecondition, invalidArgument, type TenantRef } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import type { PriceComponentType, PricedPlan, PricingModel } from '@recur/pricing';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';

/** A plan as a subscription buys it: its pricing (the snapshot) and the intervals it is sold on. */
export interface SellablePlan {
  id: string;
  price: PricedPlan;
  billingIntervals: string[];
}

const CATALOG_TIMEOUT_MS = 5_000;
const PAGE_LIMIT = 100;

/** The catalog over gRPC: reads a plan with its tiers and price components, to sell it. */
@Injectable()
export class CatalogPlans implements OnModuleDestroy {
  private readonly client: ServiceClient<typeof catalogV1.CatalogService>;

  constructor(@Inject(SUBSCRIPTION_CONFIG) config: SubscriptionConfig) {
    this.client = createServiceClient(catalogV1.CatalogService, config.catalogAddress);
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  /**
   * The plan `id` of the tenant if it can be sold now. An unknown plan is a bad body field
   * (400 resource_missing, param `plan`), as an unknown coupon is for promotion codes.
   */
  async sellable(tenant: TenantRef, id: string): Promise<SellablePlan> {
    const options = { timeoutMs: CATALOG_TIMEOUT_MS };
    const tenantMessage = toTenantMessage(tenant);
    let plan: catalogV1.GetPlanResponse['plan'];
    try {
      ({ plan } = await this.client.getPlan({ tenant: tenantMessage, id }, options));
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.NOT_FOUND) throw invalidArgument('plan', `No such plan: '${id}'`, 'resource_missing');
      throw fromGrpcError(error);
    }
    if (!plan) throw invalidArgument('plan', `No such plan: '${id}'`, 'resource_missing');
    if (plan.status !== 'active') throw failedPrecondition('plan_archived', `Plan '${id}' is archived and cannot be sold.`);
    try {
      const { tiers } = await this.client.getPlanTiers({ tenant: tenantMessage, id }, options);
      const components: catalogV1.ListPriceComponentsResponse['priceComponents'] = [];
      for (let offset = 0; ; offset += PAGE_LIMIT) {
        const page = await this.client.listPriceComponents({ tenant: tenantMessage, planId: id, page: { limit: PAGE_LIMIT, offset } }, options);
        components.push(...page.priceComponents);
        if (!page.page?.hasMore) break;
      }
      return {
        id: plan.id,
        billingIntervals: [...plan.billingIntervals],
        price: {
          name: plan.name,
          pricingModel: plan.pricingModel as PricingModel,
          amountMonthly: fromInt64(plan.price?.amountMinor ?? 0n, 'amount_monthly'),
          currency: plan.currency,
          packageSize: plan.packageSize,
          tiers: tiers.map((tier) => ({
            upTo: tier.upTo === undefined ? null : fromInt64(tier.upTo, 'up_to'),
            unitAmount: fromInt64(tier.unitAmount, 'unit_amount'),
            flatAmount: fromInt64(tier.flatAmount, 'flat_amount'),
          })),
          components: components.map((component) => ({
            id: component.id,
            type: component.type as PriceComponentType,
            name: component.name,
            metricName: component.metricName ?? null,
            unitAmount: fromInt64(component.unitAmount, 'unit_amount'),
            includedQuantity: fromInt64(component.includedQuantity, 'included_quantity'),
          })),
        },
      };
    } catch (error) {
      throw fromGrpcError(error);
    }
  }
}
