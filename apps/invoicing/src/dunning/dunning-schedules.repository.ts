import { Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import type { Prisma } from '../generated/prisma/client';
import type { PaymentRetrySchedule } from './payment-retry-schedule';

type Tx = Prisma.TransactionClient;

/** A tenant's own dunning schedule, as stored; `paymentRetries` null while it set none (the default applies). */
export interface StoredDunningSchedule {
  days: number[];
  paymentRetries: PaymentRetrySchedule | null;
  updatedAt: Date;
}

interface StoredRetries {
  days: number[];
  hour: number;
  time_zone: string;
}

const fromStored = (value: unknown): PaymentRetrySchedule | null => {
  if (!value || typeof value !== 'object') return null;
  const stored = value as StoredRetries;
  return { days: stored.days, hour: stored.hour, timeZone: stored.time_zone };
};

/** `dunning_schedules`: one row per account and app that set its own schedule (no row: the service's default). */
@Injectable()
export class DunningSchedulesRepository {
  async find(tx: Tx, tenant: TenantRef): Promise<StoredDunningSchedule | undefined> {
    const row = await tx.dunningSchedule.findUnique({ where: { accountId_livemode: { accountId: tenant.accountId, livemode: tenant.livemode } } });
    return row ? { days: row.days, paymentRetries: fromStored(row.paymentRetries), updatedAt: row.updatedAt } : undefined;
  }

  /** `paymentRetries` undefined leaves the stored retries as they are (null on a new row: the default). */
  async save(tx: Tx, tenant: TenantRef, days: number[], paymentRetries: PaymentRetrySchedule | undefined, now: Date): Promise<StoredDunningSchedule> {
    const key = { accountId: tenant.accountId, livemode: tenant.livemode };
    const retries = paymentRetries ? { paymentRetries: { days: paymentRetries.days, hour: paymentRetries.hour, time_zone: paymentRetries.timeZone } satisfies StoredRetries } : {};
    const row = await tx.dunningSchedule.upsert({ where: { accountId_livemode: key }, create: { ...key, days, ...retries, updatedAt: now }, update: { days, ...retries, updatedAt: now } });
    return { days: row.days, paymentRetries: fromStored(row.paymentRetries), updatedAt: row.updatedAt };
  }
}
