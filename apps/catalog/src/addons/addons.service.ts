import { Inject, Injectable } from '@nestjs/common';
import { type Clock, CLOCK, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import { type Addon, type AddonFields, type AddonStatus, createAddon, putOnSale, takeOffSale, updateAddon } from './addon';
import { AddonsRepository } from './addons.repository';

type Tx = Prisma.TransactionClient;

/** Add-on use cases; every change runs in the command's transaction under the add-on's row lock. */
@Injectable()
export class AddonsService {
  constructor(
    private readonly addons: AddonsRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: AddonFields & { name: string; priceMonthly: number }): Promise<Addon> {
    const addon = createAddon(tenant, fields, this.now());
    await this.addons.insert(tx, addon);
    return addon;
  }

  get(tenant: TenantRef, id: string): Promise<Addon> {
    return this.addons.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, status?: AddonStatus): Promise<{ addons: Addon[]; page: PageInfo }> {
    return this.addons.list(tenant, page, status);
  }

  update(tx: Tx, tenant: TenantRef, id: string, fields: AddonFields): Promise<Addon> {
    return this.change(tx, tenant, id, (addon, now) => updateAddon(addon, fields, now));
  }

  takeOffSale(tx: Tx, tenant: TenantRef, id: string): Promise<Addon> {
    return this.change(tx, tenant, id, takeOffSale);
  }

  restore(tx: Tx, tenant: TenantRef, id: string): Promise<Addon> {
    return this.change(tx, tenant, id, putOnSale);
  }

  private async change(tx: Tx, tenant: TenantRef, id: string, apply: (addon: Addon, now: Date) => Addon): Promise<Addon> {
    const after = apply(await this.addons.getForUpdate(tx, tenant, id), this.now());
    await this.addons.update(tx, after);
    return after;
  }
}
