import { Injectable } from '@nestjs/common';
import { DomainError, invalidArgument, notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Coupon } from './coupon';
import { fromCouponRow, fromPromotionCodeRow, toCouponRow, toPromotionCodeRow } from './coupon.mapper';
import { codeKey, type PromotionCode } from './promotion-code';

type Tx = Prisma.TransactionClient;

/** Coupons and promotion codes; every query is scoped to one tenant, deleted ones are gone. */
@Injectable()
export class CouponsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Coupon> {
    const row = await tx.coupon.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null } });
    if (!row) throw notFound('coupon', id);
    return fromCouponRow(row);
  }

  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Coupon> {
    await tx.$executeRaw`SELECT 1 FROM coupons WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  /** The coupon a new promotion code points at: a missing one is a bad body field (400, param `coupon`). */
  async getReferenced(tx: Tx, tenant: TenantRef, id: string): Promise<Coupon> {
    try {
      return await this.getForUpdate(tx, tenant, id);
    } catch {
      throw invalidArgument('coupon', `No such coupon: '${id}'`, 'resource_missing');
    }
  }


  async list(tenant: TenantRef, page: Page): Promise<{ coupons: Coupon[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null };
    const { rows, page: info } = await readListPage(page, {
      resource: 'coupon', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.coupon.findMany(read),
      count: (query) => this.prisma.coupon.count(query),
    });
    return { coupons: rows.map(fromCouponRow), page: info };
  }

  async insert(tx: Tx, coupon: Coupon): Promise<void> {
    await tx.coupon.create({ data: toCouponRow(coupon) });
  }

  async update(tx: Tx, coupon: Coupon): Promise<void> {
    const { name, type, value, currency, duration, durationInPeriods, metadata, updatedAt, deletedAt } = toCouponRow(coupon);
    await tx.coupon.update({ where: { id: coupon.id }, data: { name, type, value, currency, duration, durationInPeriods, metadata, updatedAt, deletedAt } });
  }

  /** Deletes the coupon's codes with it, freeing their text. */
  async deleteCodesOf(tx: Tx, coupon: Coupon, now: Date): Promise<void> {
    await tx.promotionCode.updateMany({ where: { couponId: coupon.id, accountId: coupon.tenant.accountId, livemode: coupon.tenant.livemode, deletedAt: null }, data: { deletedAt: now, updatedAt: now, codeKey: null } });
  }

  async getCode(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<PromotionCode> {
    const row = await tx.promotionCode.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null } });
    if (!row) throw notFound('promotion code', id);
    return fromPromotionCodeRow(row);
  }

  async getCodeForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<PromotionCode> {
    await tx.$executeRaw`SELECT 1 FROM promotion_codes WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.getCode(tenant, id, tx);
  }


  async listCodes(tenant: TenantRef, page: Page, filter: { couponId?: string; code?: string }): Promise<{ codes: PromotionCode[]; page: PageInfo }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      deletedAt: null,
      ...(filter.couponId === undefined ? {} : { couponId: filter.couponId }),
      ...(filter.code === undefined ? {} : { codeKey: codeKey(filter.code) }),
    };
    const { rows, page: info } = await readListPage(page, {
      resource: 'promotion code', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.promotionCode.findMany(read),
      count: (query) => this.prisma.promotionCode.count(query),
    });
    return { codes: rows.map(fromPromotionCodeRow), page: info };
  }

  /** Codes are unique per app ignoring case; a taken text changes nothing and is refused. */
  async insertCode(tx: Tx, code: PromotionCode): Promise<void> {
    // ON CONFLICT DO NOTHING: the command's transaction stays usable (a unique violation would abort it).
    const { count } = await tx.promotionCode.createMany({ data: [toPromotionCodeRow(code)], skipDuplicates: true });
    if (count === 0) throw new DomainError('already_exists', 'promotion_code_exists', `A promotion code '${code.code}' already exists (codes ignore case).`, 'code');
  }

  async updateCode(tx: Tx, code: PromotionCode): Promise<void> {
    const { active, maxRedemptions, timesRedeemed, expiresAt, updatedAt, deletedAt, codeKey: key } = toPromotionCodeRow(code);
    await tx.promotionCode.update({ where: { id: code.id }, data: { active, maxRedemptions, timesRedeemed, expiresAt, updatedAt, deletedAt, codeKey: key } });
  }

  /** The live code with this text (ignoring case), locked; an unknown one is a bad body field of the redeemer. */
  async getCodeByTextForUpdate(tx: Tx, tenant: TenantRef, text: string): Promise<PromotionCode> {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM promotion_codes WHERE code_key = ${codeKey(text)} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} AND deleted_at IS NULL FOR UPDATE`;
    if (!rows[0]) throw invalidArgument('promotion_code', `No such promotion code: '${text}'`, 'resource_missing');
    return this.getCode(tenant, rows[0].id, tx);
  }

  /** Stores a coupon's redemption count (the only field a redemption changes). */
  async countRedemption(tx: Tx, coupon: Coupon): Promise<void> {
    await tx.coupon.update({ where: { id: coupon.id }, data: { timesRedeemed: coupon.timesRedeemed } });
  }
}
