import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { catalogV1, requireTenant } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { toCouponMessage, toPromotionCodeMessage } from './coupon.mapper';
import { CouponsService } from './coupons.service';

/** gRPC edge of the coupon and promotion-code use cases: decode, call, encode. No rules live here. */
@Controller()
export class CouponsGrpcController {
  constructor(private readonly coupons: CouponsService) {}

  @GrpcMethod('CatalogService', 'CreateCoupon')
  async createCoupon(request: catalogV1.CreateCouponRequest): Promise<MessageInitShape<typeof catalogV1.CreateCouponResponseSchema>> {
    const coupon = await this.coupons.create(
      requireTenant(request.tenant),
      {
        name: request.name,
        type: request.type,
        value: request.value,
        currency: request.currency,
        duration: request.duration,
        durationInPeriods: request.durationInPeriods,
        metadata: request.metadata,
      },
      request.requestId || null,
    );
    return { coupon: toCouponMessage(coupon) };
  }

  @GrpcMethod('CatalogService', 'GetCoupon')
  async getCoupon(request: catalogV1.GetCouponRequest): Promise<MessageInitShape<typeof catalogV1.GetCouponResponseSchema>> {
    return { coupon: toCouponMessage(await this.coupons.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListCoupons')
  async listCoupons(request: catalogV1.ListCouponsRequest): Promise<MessageInitShape<typeof catalogV1.ListCouponsResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { coupons, total } = await this.coupons.list(tenant, page);
    return { coupons: coupons.map(toCouponMessage), page: pageInfo(page, coupons.length, total) };
  }

  @GrpcMethod('CatalogService', 'UpdateCoupon')
  async updateCoupon(request: catalogV1.UpdateCouponRequest): Promise<MessageInitShape<typeof catalogV1.UpdateCouponResponseSchema>> {
    const coupon = await this.coupons.update(requireTenant(request.tenant), request.id, {
      name: request.name,
      type: request.type,
      value: request.value,
      currency: request.currency,
      duration: request.duration,
      durationInPeriods: request.durationInPeriods,
      metadata: Object.keys(request.metadata).length > 0 ? request.metadata : undefined,
    });
    return { coupon: toCouponMessage(coupon) };
  }

  @GrpcMethod('CatalogService', 'DeleteCoupon')
  async deleteCoupon(request: catalogV1.DeleteCouponRequest): Promise<MessageInitShape<typeof catalogV1.DeleteCouponResponseSchema>> {
    return { coupon: toCouponMessage(await this.coupons.delete(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'CreatePromotionCode')
  async createPromotionCode(request: catalogV1.CreatePromotionCodeRequest): Promise<MessageInitShape<typeof catalogV1.CreatePromotionCodeResponseSchema>> {
    const code = await this.coupons.createCode(
      requireTenant(request.tenant),
      request.couponId,
      {
        code: request.code,
        active: request.active,
        maxRedemptions: request.maxRedemptions,
        expiresAt: request.expiresAt === undefined ? undefined : Number(request.expiresAt),
      },
      request.requestId || null,
    );
    return { promotionCode: toPromotionCodeMessage(code) };
  }

  @GrpcMethod('CatalogService', 'GetPromotionCode')
  async getPromotionCode(request: catalogV1.GetPromotionCodeRequest): Promise<MessageInitShape<typeof catalogV1.GetPromotionCodeResponseSchema>> {
    return { promotionCode: toPromotionCodeMessage(await this.coupons.getCode(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('CatalogService', 'ListPromotionCodes')
  async listPromotionCodes(request: catalogV1.ListPromotionCodesRequest): Promise<MessageInitShape<typeof catalogV1.ListPromotionCodesResponseSchema>> {
    const tenant = requireTenant(request.tenant);
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { codes, total } = await this.coupons.listCodes(tenant, page, { couponId: request.couponId, code: request.code });
    return { promotionCodes: codes.map(toPromotionCodeMessage), page: pageInfo(page, codes.length, total) };
  }

  @GrpcMethod('CatalogService', 'UpdatePromotionCode')
  async updatePromotionCode(request: catalogV1.UpdatePromotionCodeRequest): Promise<MessageInitShape<typeof catalogV1.UpdatePromotionCodeResponseSchema>> {
    const code = await this.coupons.updateCode(requireTenant(request.tenant), request.id, {
      active: request.active,
      maxRedemptions: request.clearMaxRedemptions ? null : request.maxRedemptions,
      expiresAt: request.clearExpiresAt ? null : request.expiresAt === undefined ? undefined : Number(request.expiresAt),
    });
    return { promotionCode: toPromotionCodeMessage(code) };
  }

  @GrpcMethod('CatalogService', 'DeletePromotionCode')
  async deletePromotionCode(request: catalogV1.DeletePromotionCodeRequest): Promise<MessageInitShape<typeof catalogV1.DeletePromotionCodeResponseSchema>> {
    return { promotionCode: toPromotionCodeMessage(await this.coupons.deleteCode(requireTenant(request.tenant), request.id)) };
  }
}
