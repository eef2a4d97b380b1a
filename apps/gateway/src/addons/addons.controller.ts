import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { type AddonJson, presentAddon, toTenantMessage } from '@recur/contracts';
import { toInt64 } from '@recur/money';
import type { Request } from 'express';
import { type ListEnvelope, listEnvelope } from '../http/list';
import { callerOf, requestState } from '../http/request-context';
import { ServiceClients } from '../infrastructure/service-clients';
import { CreateAddonDto, ListAddonsQueryDto, UpdateAddonDto } from './addons.dto';

const tenantOf = (request: Request) => toTenantMessage(callerOf(request).tenant);

/** `/v1/addons` → CatalogService. Rules live in the service. */
@Controller('v1/addons')
export class AddonsController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreateAddonDto): Promise<AddonJson> {
    const { addon } = await this.services.catalog.createAddon({
      tenant: tenantOf(request),
      name: body.name,
      description: body.description,
      priceMonthly: toInt64(body.price_monthly, 'price_monthly'),
      currency: body.currency ?? '',
      metadata: body.metadata ?? {},
      requestId: requestState(request).commandId,
    });
    return presentAddon(addon!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListAddonsQueryDto): Promise<ListEnvelope<AddonJson>> {
    const { addons, page } = await this.services.catalog.listAddons({
      tenant: tenantOf(request),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
      status: query.status,
    });
    return listEnvelope('/v1/addons', addons.map(presentAddon), query, page);
  }

  @Get(':id')
  async retrieve(@Req() request: Request, @Param('id') id: string): Promise<AddonJson> {
    const { addon } = await this.services.catalog.getAddon({ tenant: tenantOf(request), id });
    return presentAddon(addon!);
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdateAddonDto): Promise<AddonJson> {
    const { addon } = await this.services.catalog.updateAddon({
      tenant: tenantOf(request),
      id,
      name: body.name,
      description: body.description === null ? '' : body.description,
      priceMonthly: toInt64(body.price_monthly, 'price_monthly'),
      currency: body.currency,
      metadata: body.metadata ?? {},
    });
    return presentAddon(addon!);
  }

  @Delete(':id')
  async takeOffSale(@Req() request: Request, @Param('id') id: string): Promise<AddonJson> {
    const { addon } = await this.services.catalog.takeAddonOffSale({ tenant: tenantOf(request), id });
    return presentAddon(addon!);
  }

  @Post(':id/restore')
  @HttpCode(200)
  async restore(@Req() request: Request, @Param('id') id: string): Promise<AddonJson> {
    const { addon } = await this.services.catalog.restoreAddon({ tenant: tenantOf(request), id });
    return presentAddon(addon!);
  }
}
