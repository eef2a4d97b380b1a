import { Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import type { PaymentProvider } from '@recur/vocabulary';
import type { Prisma, PaymentMethod as PaymentMethodRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { type ConsentSource, type PaymentMethod, paymentMethodNotFound } from './payment-method';

type Tx = Prisma.TransactionClient;

export function fromPaymentMethodRow(row: PaymentMethodRow): PaymentMethod {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    customerId: row.customerId,
    phoneNumber: row.phoneNumber,
    provider: row.provider as PaymentProvider,
    isDefault: row.isDefault,
    consentAt: row.consentAt,
    consentSource: row.consentSource as ConsentSource,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    detachedAt: row.detachedAt,
  };
}

/** Payment methods in the payments database; every query is the tenant's and the customer's. */
@Injectable()
export class PaymentMethodsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Serialises the changes of one customer's methods (which one is default) until the transaction ends. */
  async lockCustomer(tx: Tx, tenant: TenantRef, customerId: string): Promise<void> {
    const key = JSON.stringify(['payment-methods', tenant.accountId, tenant.livemode, customerId]);
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
  }

  /** The customer's attached methods, the default first, then newest first. */
  async listAttached(tenant: TenantRef, customerId: string, tx: Tx = this.prisma): Promise<PaymentMethod[]> {
    const rows = await tx.paymentMethod.findMany({
      where: { accountId: tenant.accountId, livemode: tenant.livemode, customerId, detachedAt: null },
      orderBy: [{ isDefault: 'desc' }, { createdAt: 'desc' }, { id: 'desc' }],
    });
    return rows.map(fromPaymentMethodRow);
  }

  /** The customer's method `id` (attached or detached); another customer's or tenant's is unknown. */
  async get(tx: Tx, tenant: TenantRef, customerId: string, id: string): Promise<PaymentMethod> {
    const row = await tx.paymentMethod.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode, customerId } });
    if (!row) throw paymentMethodNotFound(id);
    return fromPaymentMethodRow(row);
  }

  /** The customer's default method, if one is attached: what automatic collection charges. */
  async findDefault(tenant: TenantRef, customerId: string, tx: Tx = this.prisma): Promise<PaymentMethod | undefined> {
    const row = await tx.paymentMethod.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, customerId, isDefault: true, detachedAt: null } });
    return row ? fromPaymentMethodRow(row) : undefined;
  }

  async insert(tx: Tx, method: PaymentMethod): Promise<void> {
    await tx.paymentMethod.create({
      data: {
        id: method.id,
        accountId: method.tenant.accountId,
        livemode: method.tenant.livemode,
        customerId: method.customerId,
        phoneNumber: method.phoneNumber,
        provider: method.provider,
        isDefault: method.isDefault,
        consentAt: method.consentAt,
        consentSource: method.consentSource,
        createdAt: method.createdAt,
        updatedAt: method.updatedAt,
        detachedAt: method.detachedAt,
      },
    });
  }

  /** Makes `id` the customer's only default (the other attached ones lose it first: the partial unique index). */
  async makeDefault(tx: Tx, tenant: TenantRef, customerId: string, id: string, now: Date): Promise<void> {
    await tx.paymentMethod.updateMany({ where: { accountId: tenant.accountId, livemode: tenant.livemode, customerId, isDefault: true, NOT: { id } }, data: { isDefault: false, updatedAt: now } });
    await tx.paymentMethod.update({ where: { id }, data: { isDefault: true, updatedAt: now } });
  }

  async detach(tx: Tx, id: string, now: Date): Promise<void> {
    await tx.paymentMethod.update({ where: { id }, data: { isDefault: false, detachedAt: now, updatedAt: now } });
  }
}
