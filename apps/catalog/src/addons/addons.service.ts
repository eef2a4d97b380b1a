import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type Page, type TenantRef } from '@recur/kernel';
import { createOnce } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { type Addon, type AddonFields, type AddonStatus, createAddon, putOnSale, takeOffSale, updateAddon } from './addon';
import { AddonsRepository } from './addons.repository';

/** Add-on use cases; every change runs under the add-on's row lock. */
@Injectable()
export class AddonsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly addons: AddonsRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  create(tenant: TenantRef, fields: AddonFields & { name: string; priceMonthly: number }, requestId: string | null): Promise<Addon> {
    return createOnce(requestId, (id) => this.addons.findByRequestId(tenant, id), async () => {
      const addon = createAddon(tenant, fields, this.now());
      await this.addons.insert(addon, requestId);
      return addon;
    });
  }

  get(tenant: TenantRef, id: string): Promise<Addon> {
    return this.addons.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, status?: AddonStatus): Promise<{ addons: Addon[]; total: number }> {
    return this.addons.list(tenant, page, status);
  }

  update(tenant: TenantRef, id: string, fields: AddonFields): Promise<Addon> {
    return this.change(tenant, id, (addon, now) => updateAddon(addon, fields, now));
  }

  takeOffSale(tenant: TenantRef, id: string): Promise<Addon> {
    return this.change(tenant, id, takeOffSale);
  }

  restore(tenant: TenantRef, id: string): Promise<Addon> {
    return this.change(tenant, id, putOnSale);
  }

  private change(tenant: TenantRef, id: string, apply: (addon: Addon, now: Date) => Addon): Promise<Addon> {
    return this.prisma.$transaction(async (tx) => {
      const after = apply(await this.addons.getForUpdate(tx, tenant, id), this.now());
      await this.addons.update(tx, after);
      return after;
    });
  }
}
