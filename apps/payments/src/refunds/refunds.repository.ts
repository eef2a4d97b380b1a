import { Injectable } from '@nestjs/common';
import type { TenantRef } from '@recur/kernel';
import { fromInt64, money, toInt64 } from '@recur/money';
import type { RefundReason } from '@recur/vocabulary';
import type { Prisma, Refund as RefundRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Refund } from './refund';

type Tx = Prisma.TransactionClient;

/** NOTIFY channel that wakes the refund worker. */
export const REFUNDS_DUE_CHANNEL = 'refunds_due';

export function fromRefundRow(row: RefundRow): Refund {
  return {
    id: row.id,
    tenant: { accountId: row.accountId, livemode: row.livemode },
    invoiceId: row.invoiceId,
    paymentId: row.paymentId,
    amount: money(fromInt64(row.amount), row.currency),
    reason: row.reason as RefundReason,
    providerRefundId: row.providerRefundId,
    status: row.status as Refund['status'],
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    requestId: row.requestId,
    createdAt: row.createdAt,
    recordedAt: row.recordedAt,
  };
}

/** Refunds in the payments database; each row is also the refund worker's due-time row. */
@Injectable()
export class RefundsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(id: string): Promise<Refund | undefined> {
    const row = await this.prisma.refund.findUnique({ where: { id } });
    return row ? fromRefundRow(row) : undefined;
  }

  /** The invoice's refund that is not failed, if any (at most one: a partial unique index). */
  async findActive(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<Refund | undefined> {
    const row = await tx.refund.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, status: { not: 'failed' } } });
    return row ? fromRefundRow(row) : undefined;
  }

  /** Keeps a new refund, due for the worker at `recoverAt` in case this process does not finish it. */
  async insert(tx: Tx, refund: Refund, recoverAt: Date): Promise<void> {
    await tx.refund.create({
      data: {
        id: refund.id,
        accountId: refund.tenant.accountId,
        livemode: refund.tenant.livemode,
        invoiceId: refund.invoiceId,
        paymentId: refund.paymentId,
        amount: toInt64(refund.amount.amountMinor),
        currency: refund.amount.currency,
        reason: refund.reason,
        providerRefundId: refund.providerRefundId,
        status: refund.status,
        requestId: refund.requestId,
        createdAt: refund.createdAt,
        updatedAt: refund.createdAt,
        dueAt: recoverAt,
      },
    });
  }

  /** Records the provider's answer once (only over `pending`); a failed refund needs nothing more. */
  async saveProviderResult(refund: Refund, now: Date, recoverAt: Date): Promise<Refund> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET status = ${refund.status}, failure_code = ${refund.failureCode}, failure_message = ${refund.failureMessage}, updated_at = ${now},
             due_at = ${refund.status === 'failed' ? null : recoverAt}, last_error = NULL
      WHERE id = ${refund.id} AND status = 'pending'`;
    return (await this.get(refund.id))!;
  }

  /** Invoicing issued the credit note: nothing is left to do. */
  async markRecorded(id: string, now: Date, note: string | null): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET recorded_at = ${now}, due_at = NULL, lease_until = NULL, last_error = ${note}, updated_at = ${now} WHERE id = ${id}`;
  }

  /** Tried again after `delayMs` (the provider or invoicing could not be reached). */
  async later(id: string, now: Date, delayMs: number, error: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET attempts = attempts + 1, last_error = ${error}, lease_until = NULL, due_at = ${new Date(now.getTime() + delayMs)}, updated_at = ${now}
      WHERE id = ${id} AND due_at IS NOT NULL`;
  }
}
