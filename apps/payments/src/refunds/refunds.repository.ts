import { Injectable } from '@nestjs/common';
import { notFound, type TenantRef } from '@recur/kernel';
import { fromInt64, money, toInt64 } from '@recur/money';
import type { Prisma, Refund as RefundRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { RefundFinal } from '../providers/payment-provider';
import { type Refund, REFUNDS_OF_PAID_INVOICE, settleRefund } from './refund';

type Tx = Prisma.TransactionClient;

/** NOTIFY channel that wakes the refund worker. */
export const REFUNDS_DUE_CHANNEL = 'refunds_due';

export function fromRefundRow(row: RefundRow): Refund {
  return {
    id: row.id,
    kind: row.kind as Refund['kind'],
    tenant: { accountId: row.accountId, livemode: row.livemode },
    invoiceId: row.invoiceId,
    paymentId: row.paymentId,
    amount: money(fromInt64(row.amount), row.currency),
    reason: row.reason as Refund['reason'],
    providerRefundId: row.providerRefundId,
    status: row.status as Refund['status'],
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    requestId: row.requestId,
    createdAt: row.createdAt,
    recordedAt: row.recordedAt,
    creditInvoiceId: row.creditInvoiceId,
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

  /** A refund of the tenant; another tenant's is unknown (NOT_FOUND). */
  async getInTenant(tenant: TenantRef, id: string): Promise<Refund> {
    const row = await this.prisma.refund.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('refund', id);
    return fromRefundRow(row);
  }

  /** The refund with our id at its provider (pawaPay's refundId), as a refund callback names it. */
  async findByProviderRefundId(providerRefundId: string): Promise<Refund | undefined> {
    const row = await this.prisma.refund.findUnique({ where: { providerRefundId } });
    return row ? fromRefundRow(row) : undefined;
  }

  /** The invoice's refunds that are not failed (succeeded or under way); returns of unapplied payments are no refunds of it. */
  async activeOf(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<Refund[]> {
    const rows = await tx.refund.findMany({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, kind: { in: [...REFUNDS_OF_PAID_INVOICE] }, status: { not: 'failed' } } });
    return rows.map(fromRefundRow);
  }

  /** The refund of the invoice a request with this id started (its repeat answers it), if any. */
  async findByRequest(tx: Tx, tenant: TenantRef, invoiceId: string, requestId: string): Promise<Refund | undefined> {
    const row = await tx.refund.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, kind: { in: [...REFUNDS_OF_PAID_INVOICE] }, requestId } });
    return row ? fromRefundRow(row) : undefined;
  }

  /** Keeps a new refund, due for the worker at `recoverAt` in case this process does not finish it. */
  async insert(tx: Tx, refund: Refund, recoverAt: Date): Promise<void> {
    await tx.refund.create({
      data: {
        id: refund.id,
        kind: refund.kind,
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
        creditInvoiceId: refund.creditInvoiceId,
        createdAt: refund.createdAt,
        updatedAt: refund.createdAt,
        dueAt: recoverAt,
      },
    });
  }

  /**
   * Records the provider's answer to the request once (only over `pending`), due again at
   * `nextAt` (the credit note's safety net, or the first status check); a failed refund needs nothing
   * more, but a failed `customer_credit` one gives its credit back to the balance (due at once).
   */
  async saveProviderResult(refund: Refund, now: Date, nextAt: Date): Promise<Refund> {
    const dueAt = refund.status !== 'failed' ? nextAt : refund.kind === 'customer_credit' ? now : null;
    await this.prisma.$executeRaw`
      UPDATE refunds SET status = ${refund.status}, failure_code = ${refund.failureCode}, failure_message = ${refund.failureMessage}, updated_at = ${now},
             due_at = ${dueAt}, last_error = NULL
      WHERE id = ${refund.id} AND status = 'pending'`;
    return (await this.get(refund.id))!;
  }

  /**
   * The provider's final word (a callback or a status check), under the refund's row lock, so of
   * racing reporters one moves it and the others find it settled (`changed: false`). A succeeded
   * refund is due at once for its credit note (the NOTIFY at commit wakes the worker).
   */
  async settle(id: string, final: RefundFinal, now: Date): Promise<{ refund: Refund; changed: boolean }> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM refunds WHERE id = ${id} FOR UPDATE`;
      const current = fromRefundRow(await tx.refund.findUniqueOrThrow({ where: { id } }));
      const settled = settleRefund(current, final);
      if (!settled) return { refund: current, changed: false };
      // Due at once: a succeeded refund for its record, a failed customer_credit one to give its credit back.
      const due = settled.status === 'succeeded' || settled.kind === 'customer_credit';
      await tx.$executeRaw`
        UPDATE refunds SET status = ${settled.status}, failure_code = ${settled.failureCode}, failure_message = ${settled.failureMessage}, updated_at = ${now},
               due_at = ${due ? now : null}, last_error = NULL
        WHERE id = ${id}`;
      if (due) await tx.$executeRaw`SELECT pg_notify(${REFUNDS_DUE_CHANNEL}, '')`;
      return { refund: settled, changed: true };
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /** Asked at the provider again after `delayMs` while it still processes the refund. */
  async checkLater(id: string, now: Date, delayMs: number): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET attempts = attempts + 1, last_error = NULL, lease_until = NULL, due_at = ${new Date(now.getTime() + delayMs)}, updated_at = ${now}
      WHERE id = ${id} AND status = 'processing'`;
  }

  /** Invoicing issued the credit note: nothing is left to do. */
  async markRecorded(id: string, now: Date, note: string | null): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET recorded_at = ${now}, due_at = NULL, lease_until = NULL, last_error = ${note}, updated_at = ${now} WHERE id = ${id}`;
  }

  /**
   * Tried again after `delayMs` (the provider or invoicing could not be reached) — unless the
   * refund moved meanwhile (a callback settled it: it is due at once, not later).
   */
  async later(id: string, now: Date, delayMs: number, error: string, seenStatus: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE refunds SET attempts = attempts + 1, last_error = ${error}, lease_until = NULL, due_at = ${new Date(now.getTime() + delayMs)}, updated_at = ${now}
      WHERE id = ${id} AND due_at IS NOT NULL AND status = ${seenStatus}`;
  }
}
