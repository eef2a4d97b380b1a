import { Injectable } from '@nestjs/common';
import { type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, readListPage } from '@recur/persistence';
import { appendToOutbox } from '@recur/messaging';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { type Payment, type PaymentChange, paymentNotFound } from './payment';
import { translatePaymentEvent } from './payment-events.translator';
import { fromPaymentRow, toPaymentColumns } from './payment.mapper';

/** The producer name of this service's topics (`<namespace>.payments.internal`). */
export const PRODUCER = 'payments';
/** NOTIFY channel that wakes the payment janitor when a payment has work (PaymentJanitor). */
export const PAYMENTS_DUE_CHANNEL = 'payments_due';

type Tx = Prisma.TransactionClient;

/**
 * Payments in the service's database; tenant-scoped queries filter by account and mode. Saving
 * a change writes its events to the outbox and schedules the janitor's next look, in the
 * caller's transaction.
 */
@Injectable()
export class PaymentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Payment> {
    const row = await tx.payment.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw paymentNotFound(id);
    return fromPaymentRow(row);
  }

  /** Locks the payment for the rest of the transaction: concurrent settlements of one payment serialise. */
  async getForUpdate(tx: Tx, id: string): Promise<Payment | undefined> {
    const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM payments WHERE id = ${id} FOR UPDATE`;
    if (!row) return undefined;
    return fromPaymentRow((await tx.payment.findUnique({ where: { id } }))!);
  }

  /** The payment behind a page token; the token is the page's only credential. */
  async findByPageToken(token: string): Promise<Payment | undefined> {
    const row = await this.prisma.payment.findUnique({ where: { pageToken: token } });
    return row ? fromPaymentRow(row) : undefined;
  }

  /** The payment a provider names by its own id (pawaPay's depositId). */
  async findByProviderPaymentId(providerPaymentId: string): Promise<Payment | undefined> {
    const row = await this.prisma.payment.findUnique({ where: { providerPaymentId } });
    return row ? fromPaymentRow(row) : undefined;
  }

  /** Serialises the initiations of one invoice until the transaction ends. */
  async lockInvoice(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<void> {
    const key = JSON.stringify(['payment-invoice', tenant.accountId, tenant.livemode, invoiceId]);
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
  }

  async findPending(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<Payment | undefined> {
    const row = await tx.payment.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, status: 'pending' } });
    return row ? fromPaymentRow(row) : undefined;
  }

  /** The payment that settled the invoice (the last one that succeeded and was not returned as unapplied). */
  async findSucceeded(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<Payment | undefined> {
    const row = await tx.payment.findFirst({ where: { accountId: tenant.accountId, livemode: tenant.livemode, invoiceId, status: 'succeeded', unappliedReason: null }, orderBy: { settledAt: 'desc' } });
    return row ? fromPaymentRow(row) : undefined;
  }

  async list(tenant: TenantRef, page: Page, invoiceId: string | undefined): Promise<{ payments: Payment[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(invoiceId === undefined ? {} : { invoiceId }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'payment', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.payment.findMany(read),
      count: (query) => this.prisma.payment.count(query),
    });
    return { payments: rows.map(fromPaymentRow), page: info };
  }

  /** A new payment; a pending one is first checked at its provider at `checkAt`, a settled one is told to invoicing now. */
  async insert(tx: Tx, { payment, events }: PaymentChange, checkAt: Date): Promise<void> {
    await tx.payment.create({ data: { ...toPaymentColumns(payment), dueAt: payment.status === 'pending' ? checkAt : payment.updatedAt } });
    await this.afterChange(tx, events);
  }

  /** Saves a settlement: the janitor tells invoicing at once (its attempts start over). */
  async saveSettlement(tx: Tx, { payment, events }: PaymentChange): Promise<void> {
    if (events.length === 0) return;
    const { id: _id, accountId: _a, livemode: _l, ...columns } = toPaymentColumns(payment);
    await tx.payment.update({ where: { id: payment.id }, data: { ...columns, dueAt: payment.updatedAt, leaseUntil: null, attempts: 0, lastError: null } });
    await this.afterChange(tx, events);
  }

  /** The pending payment `id` saves its number as a payment method when it succeeds (the payer ticked consent on `source`). */
  async askToSaveMethod(tx: Tx, id: string, source: string): Promise<void> {
    await tx.payment.updateMany({ where: { id, status: 'pending', saveMethodSource: null }, data: { saveMethodSource: source } });
  }

  /**
   * Marks a succeeded payment unapplied and keeps the refund that returns it, in `tx`; the janitor
   * is done with it (its invoice refused it: nothing more to tell). Only once: a payment already
   * marked is left as it is (false).
   */
  async saveUnapplied(tx: Tx, { payment, events }: PaymentChange, note: string): Promise<boolean> {
    const marked = await tx.$executeRaw`
      UPDATE payments SET unapplied_reason = ${payment.unappliedReason}, refund_id = ${payment.refundId}, updated_at = ${payment.updatedAt},
             invoice_applied_at = ${payment.updatedAt}, due_at = NULL, lease_until = NULL, last_error = ${note}, attempts = attempts + 1
      WHERE id = ${payment.id} AND status = 'succeeded' AND refund_id IS NULL`;
    if (marked === 0) return false;
    await appendToOutbox(tx, PRODUCER, events.flatMap(translatePaymentEvent));
    return true;
  }

  /** The pending payments of an invoice, locked for the rest of the transaction. */
  async pendingOfInvoiceForUpdate(tx: Tx, tenant: TenantRef, invoiceId: string): Promise<Payment[]> {
    const ids = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM payments WHERE account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} AND invoice_id = ${invoiceId} AND status = 'pending' FOR UPDATE`;
    if (ids.length === 0) return [];
    return (await tx.payment.findMany({ where: { id: { in: ids.map((row) => row.id) } } })).map(fromPaymentRow);
  }

  private async afterChange(tx: Tx, events: PaymentChange['events']): Promise<void> {
    await appendToOutbox(tx, PRODUCER, events.flatMap(translatePaymentEvent));
    await tx.$executeRaw`SELECT pg_notify(${PAYMENTS_DUE_CHANNEL}, '')`;
  }
}
