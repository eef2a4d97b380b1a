import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { appendToOutbox } from '@recur/messaging';
import { fromSqlRow, NEWEST_FIRST, type PgTransaction, ReadBatcher, readListPage } from '@recur/persistence';
import type { Customer as CustomerRow, Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Customer, CustomerChange } from './customer';
import { translateCustomerEvent } from './customer-events.translator';
import { fromCustomerRow, toCustomerRow } from './customer.mapper';

/** The producer name of this service's topics (`<namespace>.subscription.internal|public`). */
export const PRODUCER = 'subscription';

type Tx = Prisma.TransactionClient;

const INSERT_CUSTOMER = `INSERT INTO customers (id, account_id, livemode, name, email, metadata, created_at, updated_at, deleted_at, test_clock_id, address, tax_exempt, preferred_locale, phone, tax_ids)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`;

/**
 * Customers in the service's database; every query is scoped to one tenant. Saving a
 * change also writes the events it recorded to the outbox, in the caller's transaction.
 */
@Injectable()
export class CustomersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One customer by id and tenant, outside a transaction: concurrent reads share a statement (ReadBatcher over getAll). */
  private readonly byId = new ReadBatcher<{ tenant: TenantRef; id: string }, Customer | undefined>(async (asked) => {
    if (asked.length > 1) return this.getAll(asked);
    const [{ tenant, id }] = asked;
    const [row] = (await this.prisma.pool.query('SELECT * FROM customers WHERE id = $1 AND account_id = $2 AND livemode = $3', [id, tenant.accountId, tenant.livemode])).rows;
    return [row && fromCustomerRow(fromSqlRow<CustomerRow>(row))];
  });

  /**
   * Outside a transaction (a retrieve: the hottest read) the row comes straight from Prisma's own
   * pool: findFirst costs about five times the CPU of the same SELECT through `pg` (tools/bench).
   */
  async get(tenant: TenantRef, id: string, tx?: Tx): Promise<Customer> {
    if (!tx) {
      const customer = await this.byId.read({ tenant, id });
      if (!customer) throw notFound('customer', id);
      return customer;
    }
    const row = await tx.customer.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('customer', id);
    return fromCustomerRow(row);
  }

  /** Many customers, each of its own tenant, in one statement: one answer per ref, in order (deleted ones too; undefined when the tenant has no such customer). */
  async getAll(refs: readonly { tenant: TenantRef; id: string }[]): Promise<(Customer | undefined)[]> {
    const { rows } = await this.prisma.pool.query(
      `SELECT c.* FROM customers c JOIN jsonb_to_recordset($1::jsonb) AS ref(id text, account_id text, livemode boolean)
         ON c.id = ref.id AND c.account_id = ref.account_id AND c.livemode = ref.livemode`,
      [JSON.stringify(refs.map(({ tenant, id }) => ({ id, account_id: tenant.accountId, livemode: tenant.livemode })))],
    );
    // Keyed by tenant and id: an id asked under another tenant finds nothing.
    const key = (tenant: TenantRef, id: string) => JSON.stringify([tenant.accountId, tenant.livemode, id]);
    const found = new Map(rows.map((row) => fromCustomerRow(fromSqlRow<CustomerRow>(row))).map((customer) => [key(customer.tenant, customer.id), customer]));
    return refs.map(({ tenant, id }) => found.get(key(tenant, id)));
  }

  /** Locks the row for the rest of the transaction, so concurrent changes serialise. */
  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<Customer> {
    await tx.$executeRaw`SELECT 1 FROM customers WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  async list(tenant: TenantRef, page: Page, email?: string): Promise<{ customers: Customer[]; page: PageInfo }> {
    const cursorScope = { accountId: tenant.accountId, livemode: tenant.livemode };
    const { rows, page: info } = await readListPage(page, {
      resource: 'customer', order: NEWEST_FIRST, cursorScope,
      where: { ...cursorScope, deletedAt: null, ...(email === undefined ? {} : { email }) },
      findMany: (read) => this.prisma.customer.findMany(read),
      count: (query) => this.prisma.customer.count(query),
    });
    return { customers: rows.map(fromCustomerRow), page: info };
  }

  /**
   * On a plain `pg` transaction: creating customers is the hot command (PgCommands); or inside
   * another command's Prisma transaction (a sale through a sales link). The row and its outbox
   * rows go in one statement.
   */
  async insert(tx: PgTransaction | Tx, { customer, events }: CustomerChange): Promise<void> {
    const values = [customer.id, customer.tenant.accountId, customer.tenant.livemode, customer.name, customer.email, JSON.stringify(customer.metadata), customer.createdAt, customer.updatedAt, customer.deletedAt, customer.testClockId,
      customer.address === null ? null : JSON.stringify(customer.address), customer.taxExempt, customer.preferredLocale, customer.phone, JSON.stringify(customer.taxIds)];
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateCustomerEvent), { sql: INSERT_CUSTOMER, values });
  }

  /** The app's oldest live customer with this e-mail (ignoring case), if any. */
  async findByEmail(tx: Tx, tenant: TenantRef, email: string): Promise<Customer | undefined> {
    const row = await tx.customer.findFirst({
      where: { accountId: tenant.accountId, livemode: tenant.livemode, deletedAt: null, email: { equals: email, mode: 'insensitive' } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return row ? fromCustomerRow(row) : undefined;
  }

  async update(tx: Tx, { customer, events }: CustomerChange): Promise<void> {
    const { name, email, metadata, updatedAt, deletedAt, address, taxExempt, preferredLocale, phone, taxIds } = toCustomerRow(customer);
    await tx.customer.update({ where: { id: customer.id }, data: { name, email, metadata, updatedAt, deletedAt, address, taxExempt, preferredLocale, phone, taxIds } });
    await appendToOutbox(tx, PRODUCER, events.flatMap(translateCustomerEvent));
  }
}
