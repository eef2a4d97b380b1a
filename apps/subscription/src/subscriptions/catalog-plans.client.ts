import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import * as grpc from '@grpc/grpc-js';
import { catalogV1, createServiceClient, fromGrpcError, type ServiceClient, toTenantMessage } from '@recur/contracts';
import { failedPrecondition, invalidArgument, type TenantRef } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import type { CouponType, PriceComponentType, PricedPlan, PricingModel } from '@recur/pricing';
import { SUBSCRIPTION_CONFIG, type SubscriptionConfig } from '../subscription-config';
import type { CouponDuration, RedeemedCoupon } from './discount';
import type { CatalogAddOn } from './subscription';

/** A plan as a subscription buys it: its pricing (the snapshot) and the intervals it is sold on. */
export interface SellablePlan {
  id: string;
  price: PricedPlan;
  billingIntervals: string[];
}

/** A plan as the catalog answers it, with its tiers and price components. */
interface SellablePlanMessages {
  plan: catalogV1.GetSellablePlanResponse['plan'];
  tiers: catalogV1.GetSellablePlanResponse['tiers'];
  components: catalogV1.GetSellablePlanResponse['priceComponents'];
}

const CATALOG_TIMEOUT_MS = 5_000;
const PAGE_LIMIT = 100;

/**
 * The catalog over gRPC, as subscriptions need it: a plan with its tiers and price components
 * (to sell it), the intervals a plan offers, an add-on, and the redemption of a promotion code.
 */
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
    let read: SellablePlanMessages;
    try {
      read = await this.readSellable(tenant, id);
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.NOT_FOUND) throw invalidArgument('plan', `No such plan: '${id}'`, 'resource_missing');
      throw fromGrpcError(error);
    }
    const { plan, tiers, components } = read;
    if (!plan) throw invalidArgument('plan', `No such plan: '${id}'`, 'resource_missing');
    if (plan.status !== 'active') throw failedPrecondition('plan_archived', `Plan '${id}' is archived and cannot be sold.`);
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
          usageLimit: component.usageLimit === undefined ? null : fromInt64(component.usageLimit, 'usage_limit'),
        })),
        // Kept with the snapshot: the subscription's lines carry the rates the plan named when it was sold.
        ...(plan.taxRateIds.length > 0 ? { taxRateIds: [...plan.taxRateIds] } : {}),
      },
    };
  }

  /**
   * The plan with its tiers and price components: one GetSellablePlan; from a catalog release
   * without it (UNIMPLEMENTED, during a rolling upgrade), the three calls it replaces.
   */
  private async readSellable(tenant: TenantRef, id: string): Promise<SellablePlanMessages> {
    const options = { timeoutMs: CATALOG_TIMEOUT_MS };
    const tenantMessage = toTenantMessage(tenant);
    try {
      const { plan, tiers, priceComponents } = await this.client.getSellablePlan({ tenant: tenantMessage, id }, options);
      return { plan, tiers, components: priceComponents };
    } catch (error) {
      if ((error as grpc.ServiceError).code !== grpc.status.UNIMPLEMENTED) throw error;
    }
    const { plan } = await this.client.getPlan({ tenant: tenantMessage, id }, options);
    if (!plan || plan.status !== 'active') return { plan, tiers: [], components: [] };
    const { tiers } = await this.client.getPlanTiers({ tenant: tenantMessage, id }, options);
    const components: SellablePlanMessages['components'] = [];
    for (let offset = 0; ; offset += PAGE_LIMIT) {
      const page = await this.client.listPriceComponents({ tenant: tenantMessage, planId: id, page: { limit: PAGE_LIMIT, offset } }, options);
      components.push(...page.priceComponents);
      if (!page.page?.hasMore) break;
    }
    return { plan, tiers, components };
  }

  /** The intervals plan `id` is sold on (archived or not: a subscriber keeps its plan). */
  async planIntervals(tenant: TenantRef, id: string): Promise<string[]> {
    try {
      const { plan } = await this.client.getPlan({ tenant: toTenantMessage(tenant), id }, { timeoutMs: CATALOG_TIMEOUT_MS });
      return [...(plan?.billingIntervals ?? [])];
    } catch (error) {
      throw fromGrpcError(error);
    }
  }

  /** Add-on `id` of the tenant; an unknown one is a bad body field (400 resource_missing, `param`). */
  async addOn(tenant: TenantRef, id: string, param = 'addon'): Promise<CatalogAddOn> {
    let addon: catalogV1.GetAddonResponse['addon'];
    try {
      ({ addon } = await this.client.getAddon({ tenant: toTenantMessage(tenant), id }, { timeoutMs: CATALOG_TIMEOUT_MS }));
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.NOT_FOUND) throw invalidArgument(param, `No such add-on: '${id}'`, 'resource_missing');
      throw fromGrpcError(error);
    }
    if (!addon) throw invalidArgument(param, `No such add-on: '${id}'`, 'resource_missing');
    return {
      id: addon.id,
      name: addon.name,
      priceMonthly: fromInt64(addon.price?.amountMinor ?? 0n, 'price_monthly'),
      currency: addon.price?.currency ?? addon.currency,
      onSale: addon.status === 'on_sale',
      taxRateIds: [...addon.taxRateIds],
    };
  }

  /**
   * Redeems promotion code `code` (its text) at `at` for a subscription billing in `currency`.
   * The catalog counts it once per `requestId` (a repeat answers the first answer), under the
   * code's lock, so max_redemptions is exact. Refusals (unknown, inactive, expired, exhausted,
   * another currency) are 400s with param `promotion_code`.
   */
  async redeem(tenant: TenantRef, code: string, at: Date, currency: string, requestId: string): Promise<RedeemedCoupon> {
    try {
      const { promotionCode, coupon } = await this.client.redeemPromotionCode(
        { tenant: toTenantMessage(tenant), code, redeemedAt: BigInt(Math.floor(at.getTime() / 1000)), currency, requestId },
        { timeoutMs: CATALOG_TIMEOUT_MS },
      );
      if (!promotionCode || !coupon) throw new Error('RedeemPromotionCode answered without a code or coupon');
      return {
        coupon: { id: coupon.id, name: coupon.name, type: coupon.type as CouponType, value: coupon.value, currency: coupon.currency ?? null },
        duration: coupon.duration as CouponDuration,
        durationInPeriods: coupon.durationInPeriods ?? null,
        promotionCodeId: promotionCode.id,
        promotionCode: promotionCode.code,
      };
    } catch (error) {
      throw fromGrpcError(error);
    }
  }
}
