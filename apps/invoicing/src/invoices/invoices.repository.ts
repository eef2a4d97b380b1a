import { Injectable } from '@nestjs/common';
import { DomainError, notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import { insertRowsStatement, NEWEST_FIRST, type OpenTransaction, readListPage, statementsOf } from '@recur/persistence';
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
   * The invoice of one subscription period (its period invoice, or with `final` its final
   * invoice), if raised. The caller holds `lockSubscriptionPeriod`, so two raisings of one
   * period cannot both miss it.
   */
  async findByPeriod(tx: Tx, key: SubscriptionInvoiceKey): Promise<Invoice | undefined> {
    const row = await tx.invoice.findFirst({
      where: { accountId: key.tenant.accountId, livemode: key.tenant.livemode, subscriptionId: key.subscriptionId, ...(key.final ? { finalPeriodStart: key.periodStart } : { periodStart: key.periodStart }) },
      include: { lines: true },
    });
    return row ? fromInvoiceRow(row) : undefined;
  }

  /** Serialises the raisings of one subscription period's invoice (or final invoice) until the transaction ends. */
  async lockSubscriptionPeriod(tx: Tx, key: SubscriptionInvoiceKey): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${periodLockKey(key)}, 0))`;
  }

  /**
   * lockSubscriptionPeriod for many periods in one round trip, in one global order (the keys
   * sorted): a batch takes all its period locks before anything else, so two batches, or a
   * batch and a single raising, never wait on each other in a cycle.
   */
  async lockSubscriptionPeriods(tx: OpenTransaction, keys: readonly SubscriptionInvoiceKey[]): Promise<void> {
    const locks = [...new Set(keys.map(periodLockKey))].sort();
    await statementsOf(tx).query('SELECT count(pg_advisory_xact_lock(hashtextextended(key, 0)))::int AS locked FROM unnest($1::text[]) AS key', [locks]);
  }

  async list(tenant: TenantRef, page: Page, filter: InvoiceFilter): Promise<{ invoices: Invoice[]; page: PageInfo }> {
    const where = {
      accountId: tenant.accountId,
      livemode: tenant.livemode,
      ...(filter.customerId === undefined ? {} : { customerId: filter.customerId }),
      ...(filter.status === undefined ? {} : { status: filter.status }),
      ...(filter.subscriptionId === undefined ? {} : { subscriptionId: filter.subscriptionId }),
    };
    const { rows, page: info } = await readListPage(page, {
      resource: 'invoice', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.invoice.findMany({ ...read, include: { lines: true } }),
      count: (query) => this.prisma.invoice.count(query),
    });
    return { invoices: rows.map(fromInvoiceRow), page: info };
  }

  /**
   * The next invoice number of the tenant. The counter row stays locked until the calling
   * transaction ends, so finalizations of one app take numbers one at a time, and a
   * transaction that rolls back gives its number back: numbers are consecutive and gapless.
   */
  async nextNumber(tx: OpenTransaction, tenant: TenantRef): Promise<string> {
    const [first] = (await this.takeNumbers(tx, [{ tenant, count: 1 }])).values();
    return formatInvoiceNumber(first);
  }

  /**
   * `count` consecutive numbers of each tenant at once, in one statement (gapless as nextNumber:
   * each counter row stays locked until the transaction ends, and a rollback gives the range
   * back): the first number of each tenant's range, by tenantKey. Counters are taken in one
   * order (sorted), so two batches never wait on each other in a cycle.
   */
  async takeNumbers(tx: OpenTransaction, ranges: readonly { tenant: TenantRef; count: number }[]): Promise<Map<string, number>> {
    const wanted = ranges.map(({ tenant, count }) => ({ account_id: tenant.accountId, livemode: tenant.livemode, count }));
    const rows = await statementsOf(tx).query<{ account_id: string; livemode: boolean; last_number: number; count: number }>(
      `INSERT INTO invoice_number_counters AS counter (account_id, livemode, last_number)
       SELECT account_id, livemode, count FROM jsonb_to_recordset($1::jsonb) AS wanted(account_id text, livemode boolean, count int)
       ORDER BY account_id, livemode
       ON CONFLICT (account_id, livemode) DO UPDATE SET last_number = counter.last_number + EXCLUDED.last_number
       RETURNING account_id, livemode, last_number`,
      [JSON.stringify(wanted)],
    );
    const counts = new Map(ranges.map(({ tenant, count }) => [tenantKey(tenant), count]));
    return new Map(rows.map((row) => {
      const key = tenantKey({ accountId: row.account_id, livemode: row.livemode });
      return [key, Number(row.last_number) - counts.get(key)! + 1];
    }));
  }

  /**
   * Which of these subscription periods already have their invoice: its id, by the period's
   * index in `periods`, in one statement. The caller holds their period locks (lockSubscriptionPeriods).
   */
  async raisedPeriods(tx: OpenTransaction, keys: readonly SubscriptionInvoiceKey[]): Promise<Map<number, string>> {
    const rows = await statementsOf(tx).query<{ id: string; position: number }>(
      `SELECT invoice.id, period.position FROM invoices invoice
       JOIN jsonb_to_recordset($1::jsonb) AS period(position int, account_id text, livemode boolean, subscription_id text, period_start timestamptz, final boolean)
         ON invoice.account_id = period.account_id AND invoice.livemode = period.livemode AND invoice.subscription_id = period.subscription_id
        AND (CASE WHEN period.final THEN invoice.final_period_start ELSE invoice.period_start END) = period.period_start`,
      [JSON.stringify(keys.map((key, position) => ({
        position, account_id: key.tenant.accountId, livemode: key.tenant.livemode, subscription_id: key.subscriptionId, period_start: key.periodStart, final: key.final,
      })))],
    );
    return new Map(rows.map((row) => [row.position, row.id]));
  }


  async insert(tx: OpenTransaction, change: InvoiceChange): Promise<void> {
    await this.insertAll(tx, [change]);
  }

  /** New invoices with their lines and events, in three statements whatever their count; every field a line carries is stored. */
  async insertAll(tx: OpenTransaction, changes: readonly InvoiceChange[]): Promise<void> {
    if (changes.length === 0) return;
    const sql = statementsOf(tx);
    const invoices = insertRowsStatement('invoices', changes.map(({ invoice }) => toInvoiceColumns(invoice)));
    await sql.execute(invoices.sql, invoices.values);
    const lines = changes.flatMap(({ invoice }) => toInvoiceLineRows(invoice));
    if (lines.length > 0) {
      const statement = insertRowsStatement('invoice_lines', lines);
      await sql.execute(statement.sql, statement.values);
    }
    await appendToOutbox(tx, PRODUCER, changes.flatMap(({ events }) => events.flatMap(translateInvoiceEvent)));
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

/** A tenant as a map key. */
export const tenantKey = (tenant: TenantRef): string => `${tenant.accountId}:${tenant.livemode}`;

const periodLockKey = ({ tenant, subscriptionId, periodStart, final }: SubscriptionInvoiceKey): string =>
  JSON.stringify([final ? 'invoice-final' : 'invoice-period', tenant.accountId, tenant.livemode, subscriptionId, periodStart.getTime()]);

/** What raises a subscription invoice once: its subscription and period start, and whether it is the final invoice. */
export interface SubscriptionInvoiceKey {
  tenant: TenantRef;
  subscriptionId: string;
  periodStart: Date;
  final: boolean;
}
