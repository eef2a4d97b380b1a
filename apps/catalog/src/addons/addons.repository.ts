import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Addon, AddonStatus } from './addon';
import { fromAddonRow, toAddonRow } from './addon.mapper';

type Tx = Prisma.TransactionClient;

/** Add-ons in the service's database; every query is scoped to one tenant. */
@Injectable()
export class AddonsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Addon> {
    const row = await tx.addon.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('add-on', id);
    return fromAddonRow(row);
  }

  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Addon> {
    await tx.$executeRaw`SELECT 1 FROM addons WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }


  async list(tenant: TenantRef, page: Page, status?: AddonStatus): Promise<{ addons: Addon[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(status === undefined ? {} : { status }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'add-on', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.addon.findMany(read),
      count: (query) => this.prisma.addon.count(query),
    });
    return { addons: rows.map(fromAddonRow), page: info };
  }

  async insert(tx: Tx, addon: Addon): Promise<void> {
    await tx.addon.create({ data: toAddonRow(addon) });
  }

  async update(tx: Tx, addon: Addon): Promise<void> {
    const { name, description, priceMonthly, currency, status, metadata, updatedAt, taxRateIds } = toAddonRow(addon);
    await tx.addon.update({ where: { id: addon.id }, data: { name, description, priceMonthly, currency, status, metadata, updatedAt, taxRateIds } });
  }
}
