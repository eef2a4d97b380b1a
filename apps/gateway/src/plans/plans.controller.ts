import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Req } from '@nestjs/common';
import {
  type PlanJson, type PlanTiersJson, type PriceComponentJson, presentPlan, presentPlanTiers, presentPriceComponent, toTenantMessage,
} from '@recur/contracts';
import { toInt64 } from '@recur/money';
import type { Request } from 'express';
import { type ListEnvelope, listEnvelope } from '../http/list';
import { callerOf, requestState } from '../http/request-context';
import { ServiceClients } from '../infrastructure/service-clients';
import {
  ClonePlanDto, CreatePlanDto, CreatePriceComponentDto, ListPlansQueryDto, ListPriceComponentsQueryDto, ReplaceTiersDto, UpdatePlanDto, UpdatePriceComponentDto,
} from './plans.dto';

const tenantOf = (request: Request) => toTenantMessage(callerOf(request).tenant);

/** `/v1/plans` and their tiers and price components → CatalogService. Rules live in the service. */
@Controller('v1/plans')
export class PlansController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreatePlanDto): Promise<PlanJson> {
    const { plan } = await this.services.catalog.createPlan({
      tenant: tenantOf(request),
      name: body.name,
      description: body.description,
      pricingModel: body.pricing_model,
      amountMonthly: toInt64(body.amount_monthly, 'amount_monthly'),
      currency: body.currency ?? '',
      packageSize: body.package_size,
      billingIntervals: body.billing_intervals ?? [],
      metadata: body.metadata ?? {},
      requestId: requestState(request).commandId,
    });
    return presentPlan(plan!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListPlansQueryDto): Promise<ListEnvelope<PlanJson>> {
    const { plans, page } = await this.services.catalog.listPlans({
      tenant: tenantOf(request),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
      status: query.status,
    });
    return listEnvelope('/v1/plans', plans.map(presentPlan), query, page);
  }

  @Get(':id')
  async retrieve(@Req() request: Request, @Param('id') id: string): Promise<PlanJson> {
    const { plan } = await this.services.catalog.getPlan({ tenant: tenantOf(request), id });
    return presentPlan(plan!);
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdatePlanDto): Promise<PlanJson> {
    const { plan } = await this.services.catalog.updatePlan({
      tenant: tenantOf(request),
      id,
      name: body.name,
      description: body.description === null ? '' : body.description,
      pricingModel: body.pricing_model,
      amountMonthly: toInt64(body.amount_monthly, 'amount_monthly'),
      currency: body.currency,
      packageSize: body.package_size,
      billingIntervals: body.billing_intervals ?? [],
      metadata: body.metadata ?? {},
    });
    return presentPlan(plan!);
  }

  @Delete(':id')
  async archive(@Req() request: Request, @Param('id') id: string): Promise<PlanJson> {
    const { plan } = await this.services.catalog.archivePlan({ tenant: tenantOf(request), id });
    return presentPlan(plan!);
  }

  @Post(':id/restore')
  @HttpCode(200)
  async restore(@Req() request: Request, @Param('id') id: string): Promise<PlanJson> {
    const { plan } = await this.services.catalog.restorePlan({ tenant: tenantOf(request), id });
    return presentPlan(plan!);
  }

  @Post(':id/clone')
  @HttpCode(201)
  async clone(@Req() request: Request, @Param('id') id: string, @Body() body: ClonePlanDto): Promise<PlanJson> {
    const { plan } = await this.services.catalog.clonePlan({ tenant: tenantOf(request), id, name: body.name, requestId: requestState(request).commandId });
    return presentPlan(plan!);
  }

  @Get(':id/tiers')
  async tiers(@Req() request: Request, @Param('id') id: string): Promise<PlanTiersJson> {
    const { tiers } = await this.services.catalog.getPlanTiers({ tenant: tenantOf(request), id });
    return presentPlanTiers(id, tiers);
  }

  @Put(':id/tiers')
  async replaceTiers(@Req() request: Request, @Param('id') id: string, @Body() body: ReplaceTiersDto): Promise<PlanTiersJson> {
    const { tiers } = await this.services.catalog.replacePlanTiers({
      tenant: tenantOf(request),
      id,
      tiers: body.tiers.map((tier) => ({
        upTo: toInt64(tier.up_to ?? undefined, 'up_to'),
        unitAmount: toInt64(tier.unit_amount, 'unit_amount'),
        flatAmount: toInt64(tier.flat_amount ?? 0, 'flat_amount'),
      })),
    });
    return presentPlanTiers(id, tiers);
  }

  @Get(':id/price-components')
  async components(@Req() request: Request, @Param('id') id: string, @Query() query: ListPriceComponentsQueryDto): Promise<ListEnvelope<PriceComponentJson>> {
    const { priceComponents, page } = await this.services.catalog.listPriceComponents({
      tenant: tenantOf(request),
      planId: id,
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
    });
    return listEnvelope(`/v1/plans/${id}/price-components`, priceComponents.map(presentPriceComponent), query, page);
  }

  @Post(':id/price-components')
  @HttpCode(201)
  async addComponent(@Req() request: Request, @Param('id') id: string, @Body() body: CreatePriceComponentDto): Promise<PriceComponentJson> {
    const { priceComponent } = await this.services.catalog.createPriceComponent({
      tenant: tenantOf(request),
      planId: id,
      type: body.type,
      name: body.name,
      metricName: body.metric_name,
      unitAmount: toInt64(body.unit_amount, 'unit_amount'),
      includedQuantity: toInt64(body.included_quantity, 'included_quantity'),
      requestId: requestState(request).commandId,
    });
    return presentPriceComponent(priceComponent!);
  }

  @Patch(':id/price-components/:componentId')
  async updateComponent(
    @Req() request: Request,
    @Param('id') id: string,
    @Param('componentId') componentId: string,
    @Body() body: UpdatePriceComponentDto,
  ): Promise<PriceComponentJson> {
    const { priceComponent } = await this.services.catalog.updatePriceComponent({
      tenant: tenantOf(request),
      planId: id,
      id: componentId,
      name: body.name,
      metricName: body.metric_name,
      unitAmount: toInt64(body.unit_amount, 'unit_amount'),
      includedQuantity: toInt64(body.included_quantity, 'included_quantity'),
    });
    return presentPriceComponent(priceComponent!);
  }

  @Delete(':id/price-components/:componentId')
  async deleteComponent(@Req() request: Request, @Param('id') id: string, @Param('componentId') componentId: string): Promise<PriceComponentJson> {
    const { priceComponent } = await this.services.catalog.deletePriceComponent({ tenant: tenantOf(request), planId: id, id: componentId });
    return presentPriceComponent(priceComponent!);
  }
}
