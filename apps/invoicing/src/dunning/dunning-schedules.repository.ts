import { Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** A tenant's own dunning schedule, as stored. */
export interface StoredDunningSchedule {
  days: number[];
  updatedAt: Date;
}

/** `dunning_schedules`: one row per account and app that set its own schedule (no row: the service's default). */
@Injectable()
export class DunningSchedulesRepository {
  async find(tx: Tx, tenant: TenantRef): Promise<StoredDunningSchedule | undefined> {
    const row = await tx.dunningSchedule.findUnique({ where: { accountId_livemode: { accountId: tenant.accountId, livemode: tenant.livemode } } });
    return row ? { days: row.days, updatedAt: row.updatedAt } : undefined;
  }

  async save(tx: Tx, tenant: TenantRef, days: number[], now: Date): Promise<StoredDunningSchedule> {
    const key = { accountId: tenant.accountId, livemode: tenant.livemode };
    const row = await tx.dunningSchedule.upsert({ where: { accountId_livemode: key }, create: { ...key, days, updatedAt: now }, update: { days, updatedAt: now } });
    return { days: row.days, updatedAt: row.updatedAt };
  }
}
