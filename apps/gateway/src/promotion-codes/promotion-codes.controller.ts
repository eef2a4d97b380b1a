import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { presentPromotionCode, type PromotionCodeJson, toTenantMessage } from '@recur/contracts';
import type { Request } from 'express';
import { type ListEnvelope, listEnvelope } from '../http/list';
import { callerOf, requestState } from '../http/request-context';
import { ServiceClients } from '../infrastructure/service-clients';
import { CreatePromotionCodeDto, ListPromotionCodesQueryDto, UpdatePromotionCodeDto } from './promotion-codes.dto';

const tenantOf = (request: Request) => toTenantMessage(callerOf(request).tenant);

/** `/v1/promotion-codes` → CatalogService. Rules live in the service. */
@Controller('v1/promotion-codes')
export class PromotionCodesController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreatePromotionCodeDto): Promise<PromotionCodeJson> {
    const { promotionCode } = await this.services.catalog.createPromotionCode({
      tenant: tenantOf(request),
      code: body.code,
      couponId: body.coupon,
      active: body.active,
      maxRedemptions: body.max_redemptions,
      expiresAt: body.expires_at === undefined ? undefined : BigInt(body.expires_at),
      requestId: requestState(request).commandId,
    });
    return presentPromotionCode(promotionCode!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListPromotionCodesQueryDto): Promise<ListEnvelope<PromotionCodeJson>> {
    const { promotionCodes, page } = await this.services.catalog.listPromotionCodes({
      tenant: tenantOf(request),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
      couponId: query.coupon,
      code: query.code,
    });
    return listEnvelope('/v1/promotion-codes', promotionCodes.map(presentPromotionCode), query, page);
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdatePromotionCodeDto): Promise<PromotionCodeJson> {
    const { promotionCode } = await this.services.catalog.updatePromotionCode({
      tenant: tenantOf(request),
      id,
      active: body.active,
      maxRedemptions: body.max_redemptions ?? undefined,
      clearMaxRedemptions: body.max_redemptions === null,
      expiresAt: body.expires_at === null || body.expires_at === undefined ? undefined : BigInt(body.expires_at),
      clearExpiresAt: body.expires_at === null,
    });
    return presentPromotionCode(promotionCode!);
  }

  @Delete(':id')
  async remove(@Req() request: Request, @Param('id') id: string): Promise<PromotionCodeJson> {
    const { promotionCode } = await this.services.catalog.deletePromotionCode({ tenant: tenantOf(request), id });
    return presentPromotionCode(promotionCode!);
  }
}
