import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { catalogV1, PLAN_STATUSES, requireTenant } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { fromInt64 } from '@recur/money';
import { checkOneOf } from '../common/fields';
import { fromTierMessage, toPlanMessage, toPriceComponentMessage, toTierMessage } from './plan.mapper';
import { PlansService } from './plans.service';

const nonEmpty = (metadata: Record<string, string>) => (Object.keys(metadata).length > 0 ? metadata : undefined);

/** gRPC edge of the plan use cases: decode, call, encode. No rules live here. */
@Controller()
export class PlansGrpcController {
  constructor(private readonly plans: PlansService) {}

  @GrpcMethod('CatalogService', 'CreatePlan')
  async createPlan(request: catalogV1.CreatePlanRequest): Promise<MessageInitShape<typeof catalogV1.CreatePlanResponseSchema>> {
    const plan = await this.plans.create(
      requireTenant(request.tenant),
      {
        name: request.name,
        description: request.description,
        pricingModel: request.pricingModel,
        amountMonthly: fromInt64(request.amountMonthly, 'amount_monthly'),
        currency: request.currency,
        packageSize: request.packageSize,
        billingIntervals: request.billingIntervals,
        metadata: request.metadata,
      },
      request.requestId || null,
    );
    return { plan: toPlanMessage(plan) };
  }

  @GrpcMethod('CatalogService', 'GetPlan')
  async getPlan(request: catalogV1.GetPlanRequest): Promise<MessageInitShape<typeof catalogV1.GetPlanResponseSchema>> {
    return { plan: toPlanMessage(await this.plans.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListPlans')
  async listPlans(request: catalogV1.ListPlansRequest): Promise<MessageInitShape<typeof catalogV1.ListPlansResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const status = request.status === undefined ? undefined : checkOneOf(request.status, PLAN_STATUSES, 'status');
    const { plans, total } = await this.plans.list(tenant, page, status);
    return { plans: plans.map(toPlanMessage), page: pageInfo(page, plans.length, total) };
  }

  @GrpcMethod('CatalogService', 'UpdatePlan')
  async updatePlan(request: catalogV1.UpdatePlanRequest): Promise<MessageInitShape<typeof catalogV1.UpdatePlanResponseSchema>> {
    const plan = await this.plans.update(requireTenant(request.tenant), request.id, {
      name: request.name,
      description: request.description,
      pricingModel: request.pricingModel,
      amountMonthly: fromInt64(request.amountMonthly, 'amount_monthly'),
      currency: request.currency,
      packageSize: request.packageSize,
      billingIntervals: request.billingIntervals.length > 0 ? request.billingIntervals : undefined,
      metadata: nonEmpty(request.metadata),
    });
    return { plan: toPlanMessage(plan) };
  }

  @GrpcMethod('CatalogService', 'ArchivePlan')
  async archivePlan(request: catalogV1.ArchivePlanRequest): Promise<MessageInitShape<typeof catalogV1.ArchivePlanResponseSchema>> {
    return { plan: toPlanMessage(await this.plans.archive(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'RestorePlan')
  async restorePlan(request: catalogV1.RestorePlanRequest): Promise<MessageInitShape<typeof catalogV1.RestorePlanResponseSchema>> {
    return { plan: toPlanMessage(await this.plans.restore(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ClonePlan')
  async clonePlan(request: catalogV1.ClonePlanRequest): Promise<MessageInitShape<typeof catalogV1.ClonePlanResponseSchema>> {
    return { plan: toPlanMessage(await this.plans.clone(requireTenant(request.tenant), request.id, request.name, request.requestId || null)) };
  }

  @GrpcMethod('CatalogService', 'GetPlanTiers')
  async getPlanTiers(request: catalogV1.GetPlanTiersRequest): Promise<MessageInitShape<typeof catalogV1.GetPlanTiersResponseSchema>> {
    return { tiers: (await this.plans.tiers(requireTenant(request.tenant), request.id)).map(toTierMessage) };
  }

  @GrpcMethod('CatalogService', 'ReplacePlanTiers')
  async replacePlanTiers(request: catalogV1.ReplacePlanTiersRequest): Promise<MessageInitShape<typeof catalogV1.ReplacePlanTiersResponseSchema>> {
    const tiers = await this.plans.replaceTiers(requireTenant(request.tenant), request.id, request.tiers.map((tier, index) => fromTierMessage(tier, `tiers[${index}]`)));
    return { tiers: tiers.map(toTierMessage) };
  }

  @GrpcMethod('CatalogService', 'ListPriceComponents')
  async listPriceComponents(request: catalogV1.ListPriceComponentsRequest): Promise<MessageInitShape<typeof catalogV1.ListPriceComponentsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { components, total } = await this.plans.components(tenant, request.planId, page);
    return { priceComponents: components.map(toPriceComponentMessage), page: pageInfo(page, components.length, total) };
  }

  @GrpcMethod('CatalogService', 'CreatePriceComponent')
  async createPriceComponent(request: catalogV1.CreatePriceComponentRequest): Promise<MessageInitShape<typeof catalogV1.CreatePriceComponentResponseSchema>> {
    const component = await this.plans.createComponent(
      requireTenant(request.tenant),
      request.planId,
      {
        type: request.type,
        name: request.name,
        metricName: request.metricName,
        unitAmount: fromInt64(request.unitAmount, 'unit_amount'),
        includedQuantity: fromInt64(request.includedQuantity, 'included_quantity'),
      },
      request.requestId || null,
    );
    return { priceComponent: toPriceComponentMessage(component) };
  }

  @GrpcMethod('CatalogService', 'UpdatePriceComponent')
  async updatePriceComponent(request: catalogV1.UpdatePriceComponentRequest): Promise<MessageInitShape<typeof catalogV1.UpdatePriceComponentResponseSchema>> {
    const component = await this.plans.updateComponent(requireTenant(request.tenant), request.planId, request.id, {
      name: request.name,
      metricName: request.metricName,
      unitAmount: fromInt64(request.unitAmount, 'unit_amount'),
      includedQuantity: fromInt64(request.includedQuantity, 'included_quantity'),
    });
    return { priceComponent: toPriceComponentMessage(component) };
  }

  @GrpcMethod('CatalogService', 'DeletePriceComponent')
  async deletePriceComponent(request: catalogV1.DeletePriceComponentRequest): Promise<MessageInitShape<typeof catalogV1.DeletePriceComponentResponseSchema>> {
    const component = await this.plans.deleteComponent(requireTenant(request.tenant), request.planId, request.id);
    return { priceComponent: toPriceComponentMessage(component) };
  }
}
