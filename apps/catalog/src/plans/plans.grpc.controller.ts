import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { catalogV1, requireTenant } from '@recur/contracts';
import { PLAN_STATUSES } from '@recur/vocabulary';
import { checkListPage } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { checkOneOf } from '../common/fields';
import { fromTierMessage, toPlanMessage, toPriceComponentMessage, toTierMessage } from './plan.mapper';
import { PlansService } from './plans.service';
import { Commands } from '../infrastructure/commands';

const nonEmpty = (metadata: Record<string, string>) => (Object.keys(metadata).length > 0 ? metadata : undefined);

/** gRPC edge of the plan use cases: decode, call, encode. No rules live here. */
@Controller()
export class PlansGrpcController {
  constructor(
    private readonly plans: PlansService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('CatalogService', 'CreatePlan')
  async createPlan(request: catalogV1.CreatePlanRequest): Promise<catalogV1.CreatePlanResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.CreatePlanResponseSchema, async (tx) => ({
      plan: toPlanMessage(await this.plans.create(tx, tenant, {
        name: request.name,
        description: request.description,
        pricingModel: request.pricingModel,
        amountMonthly: fromInt64(request.amountMonthly, 'amount_monthly'),
        currency: request.currency,
        packageSize: request.packageSize,
        billingIntervals: request.billingIntervals,
        metadata: request.metadata,
        taxRateIds: request.taxRateIds,
      })),
    }));
  }

  @GrpcMethod('CatalogService', 'GetPlan')
  async getPlan(request: catalogV1.GetPlanRequest): Promise<MessageInitShape<typeof catalogV1.GetPlanResponseSchema>> {
    return { plan: toPlanMessage(await this.plans.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListPlans')
  async listPlans(request: catalogV1.ListPlansRequest): Promise<MessageInitShape<typeof catalogV1.ListPlansResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkListPage(request.page);
    const status = request.status === undefined ? undefined : checkOneOf(request.status, PLAN_STATUSES, 'status');
    const { plans, page: info } = await this.plans.list(tenant, page, status);
    return { plans: plans.map(toPlanMessage), page: info };
  }

  @GrpcMethod('CatalogService', 'UpdatePlan')
  async updatePlan(request: catalogV1.UpdatePlanRequest): Promise<catalogV1.UpdatePlanResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      name: request.name,
      description: request.description,
      pricingModel: request.pricingModel,
      amountMonthly: fromInt64(request.amountMonthly, 'amount_monthly'),
      currency: request.currency,
      packageSize: request.packageSize,
      billingIntervals: request.billingIntervals.length > 0 ? request.billingIntervals : undefined,
      metadata: nonEmpty(request.metadata),
      taxRateIds: request.taxRateIds?.ids,
    };
    return this.commands.run(tenant, request, catalogV1.UpdatePlanResponseSchema, async (tx) => ({ plan: toPlanMessage(await this.plans.update(tx, tenant, request.id, fields)) }));
  }

  @GrpcMethod('CatalogService', 'ArchivePlan')
  async archivePlan(request: catalogV1.ArchivePlanRequest): Promise<catalogV1.ArchivePlanResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.ArchivePlanResponseSchema, async (tx) => ({ plan: toPlanMessage(await this.plans.archive(tx, tenant, request.id)) }));
  }

  @GrpcMethod('CatalogService', 'RestorePlan')
  async restorePlan(request: catalogV1.RestorePlanRequest): Promise<catalogV1.RestorePlanResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.RestorePlanResponseSchema, async (tx) => ({ plan: toPlanMessage(await this.plans.restore(tx, tenant, request.id)) }));
  }

  @GrpcMethod('CatalogService', 'ClonePlan')
  async clonePlan(request: catalogV1.ClonePlanRequest): Promise<catalogV1.ClonePlanResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.ClonePlanResponseSchema, async (tx) => ({ plan: toPlanMessage(await this.plans.clone(tx, tenant, request.id, request.name)) }));
  }

  @GrpcMethod('CatalogService', 'GetPlanTiers')
  async getPlanTiers(request: catalogV1.GetPlanTiersRequest): Promise<MessageInitShape<typeof catalogV1.GetPlanTiersResponseSchema>> {
    return { tiers: (await this.plans.tiers(requireTenant(request.tenant), request.id)).map(toTierMessage) };
  }

  @GrpcMethod('CatalogService', 'GetSellablePlan')
  async getSellablePlan(request: catalogV1.GetSellablePlanRequest): Promise<MessageInitShape<typeof catalogV1.GetSellablePlanResponseSchema>> {
    const { plan, tiers, components } = await this.plans.sellable(requireTenant(request.tenant), request.id);
    return { plan: toPlanMessage(plan), tiers: tiers.map(toTierMessage), priceComponents: components.map(toPriceComponentMessage) };
  }

  @GrpcMethod('CatalogService', 'ReplacePlanTiers')
  async replacePlanTiers(request: catalogV1.ReplacePlanTiersRequest): Promise<catalogV1.ReplacePlanTiersResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.ReplacePlanTiersResponseSchema, async (tx) => ({
      tiers: (await this.plans.replaceTiers(tx, tenant, request.id, request.tiers.map((tier, index) => fromTierMessage(tier, `tiers[${index}]`)))).map(toTierMessage),
    }));
  }

  @GrpcMethod('CatalogService', 'ListPriceComponents')
  async listPriceComponents(request: catalogV1.ListPriceComponentsRequest): Promise<MessageInitShape<typeof catalogV1.ListPriceComponentsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkListPage(request.page);
    const { components, page: info } = await this.plans.components(tenant, request.planId, page);
    return { priceComponents: components.map(toPriceComponentMessage), page: info };
  }

  @GrpcMethod('CatalogService', 'CreatePriceComponent')
  async createPriceComponent(request: catalogV1.CreatePriceComponentRequest): Promise<catalogV1.CreatePriceComponentResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      type: request.type,
      name: request.name,
      metricName: request.metricName,
      unitAmount: fromInt64(request.unitAmount, 'unit_amount'),
      includedQuantity: fromInt64(request.includedQuantity, 'included_quantity'),
      usageLimit: fromInt64(request.usageLimit, 'usage_limit'),
    };
    return this.commands.run(tenant, request, catalogV1.CreatePriceComponentResponseSchema, async (tx) => ({
      priceComponent: toPriceComponentMessage(await this.plans.createComponent(tx, tenant, request.planId, fields)),
    }));
  }

  @GrpcMethod('CatalogService', 'UpdatePriceComponent')
  async updatePriceComponent(request: catalogV1.UpdatePriceComponentRequest): Promise<catalogV1.UpdatePriceComponentResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      name: request.name,
      metricName: request.metricName,
      unitAmount: fromInt64(request.unitAmount, 'unit_amount'),
      includedQuantity: fromInt64(request.includedQuantity, 'included_quantity'),
      usageLimit: request.clearUsageLimit ? null : fromInt64(request.usageLimit, 'usage_limit'),
    };
    return this.commands.run(tenant, request, catalogV1.UpdatePriceComponentResponseSchema, async (tx) => ({
      priceComponent: toPriceComponentMessage(await this.plans.updateComponent(tx, tenant, request.planId, request.id, fields)),
    }));
  }

  @GrpcMethod('CatalogService', 'DeletePriceComponent')
  async deletePriceComponent(request: catalogV1.DeletePriceComponentRequest): Promise<catalogV1.DeletePriceComponentResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.DeletePriceComponentResponseSchema, async (tx) => ({
      priceComponent: toPriceComponentMessage(await this.plans.deleteComponent(tx, tenant, request.planId, request.id)),
    }));
  }
}
