import { Injectable } from '@nestjs/common';
import { DomainError, notFound, type Page, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { formatInvoiceNumber, type Invoice, type InvoiceChange } from './invoice';
import { translateInvoiceEvent } from './invoice-events.translator';
import { fromInvoiceRow, toInvoiceColumns, toInvoiceLineRows } from './invoice.mapper';

/** The producer name of this service's topics (`<namespace>.invoicing.internal|public`). */
export const PRODUCER = 'invoicing';

type Tx = Prisma.TransactionClient;

export interface InvoiceFilter {
  customerId?: string;
  status?: string;
  subscriptionId?: string;
}

/**
 * Invoices in the service's database; every query is scoped to one tenant. Saving a change
 * also writes the events it recorded to the outbox, in the caller's transaction.
 */
@Injectable()
export class InvoicesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<Invoice> {
    const row = await tx.invoice.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode }, include: { lines: true } });
    if (!row) throw notFound('invoice', id);
    return fromInvoiceRow(row);
  }

  /** The invoice whose payment page token is `paymentToken`, of whichever tenant: the token is the credential. */
  async getByPaymentToken(paymentToken: string): Promise<Invoice> {
    const row = paymentToken ? await this.prisma.invoice.findUnique({ where: { paymentToken }, include: { lines: true } }) : null;
    if (!row) throw new DomainError('not_found', 'resource_missing', 'No invoice has this payment link.', 'payment_token');
    return fromInvoiceRow(row);
  }

  /** Locks the row for the rest of the transaction, so concurrent moves of one invoice serialise. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Invoice> {
    await tx.$executeRaw`SELECT 1 FROM invoices WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  /**
   * The renewal invoice of one subscription period, if raised. The caller holds
   * `lockSubscriptionPeriod`, so two raisings of one period cannot both miss it.
   */
  async findByPeriod(tx: Tx, tenant: TenantRef, subscriptionId: string, periodStart: Date): Promise<Invoice | undefined> {
    const row = await tx.invoice.findFirst({
      where: { accountId: tenant.accountId, livemode: tenant.livemode, subscriptionId, periodStart },
      include: { lines: true },
    });
    return row ? fromInvoiceRow(row) : undefined;
  }

  /** Serialises the raisings of one subscription period until the transaction ends. */
  async lockSubscriptionPeriod(tx: Tx, tenant: TenantRef, subscriptionId: string, periodStart: Date): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${periodLockKey(tenant, subscriptionId, periodStart)}, 0))`;
  }

  /**
   * lockSubscriptionPeriod for many periods in one round trip, in one global order (the keys
   * sorted): a batch takes all its period locks before anything else, so two batches, or a
   * batch and a single raising, never wait on each other in a cycle.
   */
  async lockSubscriptionPeriods(tx: Tx, periods: { tenant: TenantRef; subscriptionId: string; periodStart: Date }[]): Promise<void> {
    const keys = [...new Set(periods.map((period) => periodLockKey(period.tenant, period.subscriptionId, period.periodStart)))].sort();
    await tx.$queryRaw`SELECT count(pg_advisory_xact_lock(hashtextextended(key, 0)))::int AS locked FROM unnest(${keys}::text[]) AS key`;
  }

  async list(tenant: TenantRef, page: Page, filter: InvoiceFilter): Promise<{ invoices: Invoice[]; total: number }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
      ...(filter.subscriptionId === undefined ? {} : { subscriptionId: filter.subscriptionId }),
    };
    const [rows, total] = await Promise.all([
      this.prisma.invoice.findMany({ where, include: { lines: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: page.offset, take: page.limit }),
      this.prisma.invoice.count({ where }),
    ]);
    return { invoices: rows.map(fromInvoiceRow), total };
  }

  /**
   * The next invoice number of the tenant. The counter row stays locked until the calling
   * transaction ends, so finalizations of one app take numbers one at a time, and a
   * transaction that rolls back gives its number back: numbers are consecutive and gapless.
   */
  async nextNumber(tx: Tx, tenant: TenantRef): Promise<string> {
    const [{ last_number }] = await tx.$queryRaw<{ last_number: number }[]>`
      INSERT INTO invoice_number_counters (account_id, livemode, last_number) VALUES (${tenant.accountId}, ${tenant.livemode}, 1)
      ON CONFLICT (account_id, livemode) DO UPDATE SET last_number = invoice_number_counters.last_number + 1
      RETURNING last_number`;
    return formatInvoiceNumber(last_number);
  }

  async insert(tx: Tx, { invoice, events }: InvoiceChange): Promise<void> {
    await tx.invoice.create({ data: toInvoiceColumns(invoice) });
    await tx.invoiceLine.createMany({ data: toInvoiceLineRows(invoice) });
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateInvoiceEvent));
  }

  /** Writes the events of a change that left the invoice's columns as they were (a dunning reminder). */
  async recordEvents(tx: Tx, events: InvoiceChange['events']): Promise<void> {
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateInvoiceEvent));
  }

  async update(tx: Tx, { invoice, events }: InvoiceChange): Promise<void> {
    const { id: _id, accountId: _accountId, livemode: _livemode, ...columns } = toInvoiceColumns(invoice);
    await tx.invoice.update({ where: { id: invoice.id }, data: columns });
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateInvoiceEvent));
  }
}

const periodLockKey = (tenant: TenantRef, subscriptionId: string, periodStart: Date): string =>
  JSON.stringify(['invoice-period', tenant.accountId, tenant.livemode, subscriptionId, periodStart.getTime()]);
