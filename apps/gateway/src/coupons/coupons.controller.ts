import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { type CouponJson, presentCoupon, toTenantMessage } from '@recur/contracts';
import type { Request } from 'express';
import { type ListEnvelope, listEnvelope } from '../http/list';
import { callerOf, requestState } from '../http/request-context';
import { ServiceClients } from '../infrastructure/service-clients';
import { CreateCouponDto, ListCouponsQueryDto, UpdateCouponDto } from './coupons.dto';

const tenantOf = (request: Request) => toTenantMessage(callerOf(request).tenant);

/** `/v1/coupons` → CatalogService. Rules live in the service. */
@Controller('v1/coupons')
export class CouponsController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreateCouponDto): Promise<CouponJson> {
    const { coupon } = await this.services.catalog.createCoupon({
      tenant: tenantOf(request),
      name: body.name,
      type: body.type,
      value: body.value,
      currency: body.currency,
      duration: body.duration,
      durationInPeriods: body.duration_in_periods,
      metadata: body.metadata ?? {},
      requestId: requestState(request).commandId,
    });
    return presentCoupon(coupon!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListCouponsQueryDto): Promise<ListEnvelope<CouponJson>> {
    const { coupons, page } = await this.services.catalog.listCoupons({
      tenant: tenantOf(request),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
    });
    return listEnvelope('/v1/coupons', coupons.map(presentCoupon), query, page);
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdateCouponDto): Promise<CouponJson> {
    const { coupon } = await this.services.catalog.updateCoupon({
      tenant: tenantOf(request),
      id,
      name: body.name,
      type: body.type,
      value: body.value,
      currency: body.currency === null ? '' : body.currency,
      duration: body.duration,
      durationInPeriods: body.duration_in_periods === null ? 0 : body.duration_in_periods,
      metadata: body.metadata ?? {},
    });
    return presentCoupon(coupon!);
  }

  @Delete(':id')
  async remove(@Req() request: Request, @Param('id') id: string): Promise<CouponJson> {
    const { coupon } = await this.services.catalog.deleteCoupon({ tenant: tenantOf(request), id });
    return presentCoupon(coupon!);
  }
}
