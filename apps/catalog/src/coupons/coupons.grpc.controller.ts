import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { catalogV1, requireTenant } from '@recur/contracts';
import { checkListPage } from '@recur/kernel';
import { toCouponMessage, toPromotionCodeMessage } from './coupon.mapper';
import { CouponsService } from './coupons.service';
import { Commands } from '../infrastructure/commands';

/** gRPC edge of the coupon and promotion-code use cases: decode, call, encode. No rules live here. */
@Controller()
export class CouponsGrpcController {
  constructor(
    private readonly coupons: CouponsService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('CatalogService', 'CreateCoupon')
  async createCoupon(request: catalogV1.CreateCouponRequest): Promise<catalogV1.CreateCouponResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      name: request.name,
      type: request.type,
      value: request.value,
      currency: request.currency,
      duration: request.duration,
      durationInPeriods: request.durationInPeriods,
      metadata: request.metadata,
    };
    return this.commands.run(tenant, request, catalogV1.CreateCouponResponseSchema, async (tx) => ({ coupon: toCouponMessage(await this.coupons.create(tx, tenant, fields)) }));
  }

  @GrpcMethod('CatalogService', 'GetCoupon')
  async getCoupon(request: catalogV1.GetCouponRequest): Promise<MessageInitShape<typeof catalogV1.GetCouponResponseSchema>> {
    return { coupon: toCouponMessage(await this.coupons.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListCoupons')
  async listCoupons(request: catalogV1.ListCouponsRequest): Promise<MessageInitShape<typeof catalogV1.ListCouponsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkListPage(request.page);
    const { coupons, page: info } = await this.coupons.list(tenant, page);
    return { coupons: coupons.map(toCouponMessage), page: info };
  }

  @GrpcMethod('CatalogService', 'UpdateCoupon')
  async updateCoupon(request: catalogV1.UpdateCouponRequest): Promise<catalogV1.UpdateCouponResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      name: request.name,
      type: request.type,
      value: request.value,
      currency: request.currency,
      duration: request.duration,
      durationInPeriods: request.durationInPeriods,
      metadata: Object.keys(request.metadata).length > 0 ? request.metadata : undefined,
    };
    return this.commands.run(tenant, request, catalogV1.UpdateCouponResponseSchema, async (tx) => ({ coupon: toCouponMessage(await this.coupons.update(tx, tenant, request.id, fields)) }));
  }

  @GrpcMethod('CatalogService', 'DeleteCoupon')
  async deleteCoupon(request: catalogV1.DeleteCouponRequest): Promise<catalogV1.DeleteCouponResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.DeleteCouponResponseSchema, async (tx) => ({ coupon: toCouponMessage(await this.coupons.delete(tx, tenant, request.id)) }));
  }

  @GrpcMethod('CatalogService', 'CreatePromotionCode')
  async createPromotionCode(request: catalogV1.CreatePromotionCodeRequest): Promise<catalogV1.CreatePromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      code: request.code,
      active: request.active,
      maxRedemptions: request.maxRedemptions,
      expiresAt: request.expiresAt === undefined ? undefined : Number(request.expiresAt),
    };
    return this.commands.run(tenant, request, catalogV1.CreatePromotionCodeResponseSchema, async (tx) => ({
      promotionCode: toPromotionCodeMessage(await this.coupons.createCode(tx, tenant, request.couponId, fields)),
    }));
  }

  @GrpcMethod('CatalogService', 'GetPromotionCode')
  async getPromotionCode(request: catalogV1.GetPromotionCodeRequest): Promise<MessageInitShape<typeof catalogV1.GetPromotionCodeResponseSchema>> {
    return { promotionCode: toPromotionCodeMessage(await this.coupons.getCode(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListPromotionCodes')
  async listPromotionCodes(request: catalogV1.ListPromotionCodesRequest): Promise<MessageInitShape<typeof catalogV1.ListPromotionCodesResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkListPage(request.page);
    const { codes, page: info } = await this.coupons.listCodes(tenant, page, { couponId: request.couponId, code: request.code });
    return { promotionCodes: codes.map(toPromotionCodeMessage), page: info };
  }

  @GrpcMethod('CatalogService', 'UpdatePromotionCode')
  async updatePromotionCode(request: catalogV1.UpdatePromotionCodeRequest): Promise<catalogV1.UpdatePromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    const fields = {
      active: request.active,
      maxRedemptions: request.clearMaxRedemptions ? null : request.maxRedemptions,
      expiresAt: request.clearExpiresAt ? null : request.expiresAt === undefined ? undefined : Number(request.expiresAt),
    };
    return this.commands.run(tenant, request, catalogV1.UpdatePromotionCodeResponseSchema, async (tx) => ({
      promotionCode: toPromotionCodeMessage(await this.coupons.updateCode(tx, tenant, request.id, fields)),
    }));
  }

  @GrpcMethod('CatalogService', 'DeletePromotionCode')
  async deletePromotionCode(request: catalogV1.DeletePromotionCodeRequest): Promise<catalogV1.DeletePromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.DeletePromotionCodeResponseSchema, async (tx) => ({
      promotionCode: toPromotionCodeMessage(await this.coupons.deleteCode(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('CatalogService', 'RedeemPromotionCode')
  async redeemPromotionCode(request: catalogV1.RedeemPromotionCodeRequest): Promise<catalogV1.RedeemPromotionCodeResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, catalogV1.RedeemPromotionCodeResponseSchema, async (tx) => {
      const { code, coupon } = await this.coupons.redeemCode(tx, tenant, request.code, new Date(Number(request.redeemedAt) * 1000), request.currency);
      return { promotionCode: toPromotionCodeMessage(code), coupon: toCouponMessage(coupon) };
    });
  }
}
