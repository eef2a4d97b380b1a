import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, DomainError, type Page, type TenantRef } from '@recur/kernel';
import { createOnce, isUniqueViolation } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { type Coupon, type CouponFields, createCoupon, deleteCoupon, updateCoupon } from './coupon';
import { CouponsRepository } from './coupons.repository';
import { createPromotionCode, deletePromotionCode, type PromotionCode, type PromotionCodeFields, updatePromotionCode } from './promotion-code';

/** Coupon and promotion-code use cases; every change runs under the row lock of what it changes. */
@Injectable()
export class CouponsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly coupons: CouponsRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  create(tenant: TenantRef, fields: CouponFields & { name: string; type: string; value: number; duration: string }, requestId: string | null): Promise<Coupon> {
    return createOnce(requestId, (id) => this.coupons.findByRequestId(tenant, id), async () => {
      const coupon = createCoupon(tenant, fields, this.now());
      await this.coupons.insert(coupon, requestId);
      return coupon;
    });
  }

  get(tenant: TenantRef, id: string): Promise<Coupon> {
    return this.coupons.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page): Promise<{ coupons: Coupon[]; total: number }> {
    return this.coupons.list(tenant, page);
  }

  update(tenant: TenantRef, id: string, fields: CouponFields): Promise<Coupon> {
    return this.prisma.$transaction(async (tx) => {
      const after = updateCoupon(await this.coupons.getForUpdate(tx, tenant, id), fields, this.now());
      await this.coupons.update(tx, after);
      return after;
    });
  }

  delete(tenant: TenantRef, id: string): Promise<Coupon> {
    return this.prisma.$transaction(async (tx) => {
      const now = this.now();
      const deleted = deleteCoupon(await this.coupons.getForUpdate(tx, tenant, id), now);
      await this.coupons.update(tx, deleted);
      await this.coupons.deleteCodesOf(tx, deleted, now);
      return deleted;
    });
  }

  /** The coupon row is locked while the code is written, so a concurrent coupon delete cannot orphan it. */
  createCode(tenant: TenantRef, couponId: string, fields: PromotionCodeFields & { code: string }, requestId: string | null): Promise<PromotionCode> {
    return createOnce(requestId, (id) => this.coupons.findCodeByRequestId(tenant, id), async () => {
      try {
        return await this.prisma.$transaction(async (tx) => {
          const coupon = await this.coupons.getReferenced(tx, tenant, couponId);
          const code = createPromotionCode(tenant, coupon.id, fields, this.now());
          await this.coupons.insertCode(tx, code, requestId);
          return code;
        });
      } catch (error) {
        if (isUniqueViolation(error) && !(requestId && (await this.coupons.findCodeByRequestId(tenant, requestId)))) {
          throw new DomainError('already_exists', 'promotion_code_exists', `A promotion code '${fields.code}' already exists (codes ignore case).`, 'code');
        }
        throw error;
      }
    });
  }

  getCode(tenant: TenantRef, id: string): Promise<PromotionCode> {
    return this.coupons.getCode(tenant, id);
  }

  listCodes(tenant: TenantRef, page: Page, filter: { couponId?: string; code?: string }): Promise<{ codes: PromotionCode[]; total: number }> {
    return this.coupons.listCodes(tenant, page, filter);
  }

  updateCode(tenant: TenantRef, id: string, fields: PromotionCodeFields): Promise<PromotionCode> {
    return this.prisma.$transaction(async (tx) => {
      const after = updatePromotionCode(await this.coupons.getCodeForUpdate(tx, tenant, id), fields, this.now());
      await this.coupons.updateCode(tx, after);
      return after;
    });
  }

  deleteCode(tenant: TenantRef, id: string): Promise<PromotionCode> {
    return this.prisma.$transaction(async (tx) => {
      const deleted = deletePromotionCode(await this.coupons.getCodeForUpdate(tx, tenant, id), this.now());
      await this.coupons.updateCode(tx, deleted);
      return deleted;
    });
  }
}
