import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, invalidArgument, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { type Coupon, type CouponFields, createCoupon, deleteCoupon, updateCoupon } from './coupon';
import { CouponsRepository } from './coupons.repository';
import { createPromotionCode, deletePromotionCode, type PromotionCode, type PromotionCodeFields, redeemPromotionCode, updatePromotionCode } from './promotion-code';

type Tx = Prisma.TransactionClient;

/** Coupon and promotion-code use cases; every change runs in the command's transaction under the row lock of what it changes. */
@Injectable()
export class CouponsService {
  constructor(
    private readonly coupons: CouponsRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: CouponFields & { name: string; type: string; value: number; duration: string }): Promise<Coupon> {
    const coupon = createCoupon(tenant, fields, this.now());
    await this.coupons.insert(tx, coupon);
    return coupon;
  }

  get(tenant: TenantRef, id: string): Promise<Coupon> {
    return this.coupons.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page): Promise<{ coupons: Coupon[]; page: PageInfo }> {
    return this.coupons.list(tenant, page);
  }

  async update(tx: Tx, tenant: TenantRef, id: string, fields: CouponFields): Promise<Coupon> {
    const after = updateCoupon(await this.coupons.getForUpdate(tx, tenant, id), fields, this.now());
    await this.coupons.update(tx, after);
    return after;
  }

  async delete(tx: Tx, tenant: TenantRef, id: string): Promise<Coupon> {
    const now = this.now();
    const deleted = deleteCoupon(await this.coupons.getForUpdate(tx, tenant, id), now);
    await this.coupons.update(tx, deleted);
    await this.coupons.deleteCodesOf(tx, deleted, now);
    return deleted;
  }

  /** The coupon row is locked while the code is written, so a concurrent coupon delete cannot orphan it. */
  async createCode(tx: Tx, tenant: TenantRef, couponId: string, fields: PromotionCodeFields & { code: string }): Promise<PromotionCode> {
    const coupon = await this.coupons.getReferenced(tx, tenant, couponId);
    const code = createPromotionCode(tenant, coupon.id, fields, this.now());
    await this.coupons.insertCode(tx, code);
    return code;
  }

  getCode(tenant: TenantRef, id: string): Promise<PromotionCode> {
    return this.coupons.getCode(tenant, id);
  }

  listCodes(tenant: TenantRef, page: Page, filter: { couponId?: string; code?: string }): Promise<{ codes: PromotionCode[]; page: PageInfo }> {
    return this.coupons.listCodes(tenant, page, filter);
  }

  async updateCode(tx: Tx, tenant: TenantRef, id: string, fields: PromotionCodeFields): Promise<PromotionCode> {
    const after = updatePromotionCode(await this.coupons.getCodeForUpdate(tx, tenant, id), fields, this.now());
    await this.coupons.updateCode(tx, after);
    return after;
  }

  /**
   * Counts one redemption of the code found by its text (ignoring case) and of its coupon.
   * The code's row is locked first, so concurrent redemptions count one at a time and the
   * last one allowed by max_redemptions is the last one that succeeds.
   */
  async redeemCode(tx: Tx, tenant: TenantRef, text: string, at: Date, currency: string | undefined): Promise<{ code: PromotionCode; coupon: Coupon }> {
    const code = redeemPromotionCode(await this.coupons.getCodeByTextForUpdate(tx, tenant, text), at, this.now());
    const coupon = await this.coupons.getForUpdate(tx, tenant, code.couponId);
    if (currency !== undefined && coupon.type === 'fixed_amount' && coupon.currency !== currency) {
      throw invalidArgument('promotion_code', `Promotion code '${code.code}' takes ${coupon.currency} off; the subscription bills in ${currency}.`, 'coupon_currency_mismatch');
    }
    await this.coupons.updateCode(tx, code);
    const redeemedCoupon = { ...coupon, timesRedeemed: coupon.timesRedeemed + 1 };
    await this.coupons.countRedemption(tx, redeemedCoupon);
    return { code, coupon: redeemedCoupon };
  }

  async deleteCode(tx: Tx, tenant: TenantRef, id: string): Promise<PromotionCode> {
    const deleted = deletePromotionCode(await this.coupons.getCodeForUpdate(tx, tenant, id), this.now());
    await this.coupons.updateCode(tx, deleted);
    return deleted;
  }
}
