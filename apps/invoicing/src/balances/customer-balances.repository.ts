import { Injectable } from '@nestjs/common';
import type { Page, PageInfo, TenantRef } from '@recur/kernel';
import { fromInt64, type Money, money, toInt64 } from '@recur/money';
import { insertRowsStatement, NEWEST_FIRST, type OpenTransaction, ReadBatcher, readListPage, statementsOf } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import type { BalanceTransaction, BalanceTransactionType } from './customer-balance';

/** One customer of one tenant, as a map key. */
export const balanceKey = (tenant: TenantRef, customerId: string): string => JSON.stringify([tenant.accountId, tenant.livemode, customerId]);

/**
 * Customers' balances and their ledger. A balance changes only under its row's lock (FOR
 * UPDATE, held until the transaction ends): two finalizations, or a finalization and an
 * adjustment, of one customer take their turns, so credit is never consumed twice.
 */
@Injectable()
export class CustomerBalancesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One customer's balance (a `/v1` customer read): concurrent ones share a statement (ReadBatcher). */
  private readonly oneBalance = new ReadBatcher<{ tenant: TenantRef; customerId: string }, Money | null>(async (asked) => {
    if (asked.length === 1) return this.balancesOfTenant(asked[0].tenant, [asked[0].customerId]);
    const { rows } = await this.prisma.pool.query<{ account_id: string; livemode: boolean; customer_id: string; currency: string; balance: string }>(
      `SELECT balance.account_id, balance.livemode, balance.customer_id, balance.currency, balance.balance::text AS balance
         FROM customer_balances balance JOIN jsonb_to_recordset($1::jsonb) AS asked(account_id text, livemode boolean, customer_id text)
           ON balance.account_id = asked.account_id AND balance.livemode = asked.livemode AND balance.customer_id = asked.customer_id`,
      [JSON.stringify(asked.map(({ tenant, customerId }) => ({ account_id: tenant.accountId, livemode: tenant.livemode, customer_id: customerId })))],
    );
    // By balanceKey (tenant and customer): a customer id asked under another tenant finds nothing.
    const found = new Map(rows.map((row) => [balanceKey({ accountId: row.account_id, livemode: row.livemode }, row.customer_id), money(fromInt64(BigInt(row.balance)), row.currency)]));
    return asked.map(({ tenant, customerId }) => found.get(balanceKey(tenant, customerId)) ?? null);
  });

  /**
   * Locks the balances of these customers (in one global order, so two batches never wait on
   * each other in a cycle) and answers those that exist, by balanceKey, in one statement.
   */
  async lockMany(tx: OpenTransaction, customers: readonly { tenant: TenantRef; customerId: string }[]): Promise<Map<string, Money>> {
    if (customers.length === 0) return new Map();
    const asked = [...new Map(customers.map(({ tenant, customerId }) => [balanceKey(tenant, customerId), { account_id: tenant.accountId, livemode: tenant.livemode, customer_id: customerId }])).values()];
    const rows = await statementsOf(tx).query<{ account_id: string; livemode: boolean; customer_id: string; currency: string; balance: string }>(
      `SELECT balance.account_id, balance.livemode, balance.customer_id, balance.currency, balance.balance::text AS balance
       FROM customer_balances balance
       JOIN jsonb_to_recordset($1::jsonb) AS asked(account_id text, livemode boolean, customer_id text)
         ON balance.account_id = asked.account_id AND balance.livemode = asked.livemode AND balance.customer_id = asked.customer_id
       ORDER BY balance.account_id, balance.livemode, balance.customer_id
       FOR UPDATE OF balance`,
      [JSON.stringify(asked)],
    );
    return new Map(rows.map((row) => [balanceKey({ accountId: row.account_id, livemode: row.livemode }, row.customer_id), money(fromInt64(BigInt(row.balance)), row.currency)]));
  }

  /** Creates the balance rows these customers lack (at 0, in the given currency), in one statement; locks none. */
  async ensureRows(tx: OpenTransaction, customers: readonly { tenant: TenantRef; customerId: string; currency: string }[], now: Date): Promise<void> {
    if (customers.length === 0) return;
    await statementsOf(tx).execute(
      `INSERT INTO customer_balances (account_id, livemode, customer_id, currency, balance, updated_at)
       SELECT account_id, livemode, customer_id, currency, 0, $2 FROM jsonb_to_recordset($1::jsonb) AS asked(account_id text, livemode boolean, customer_id text, currency text)
       ORDER BY account_id, livemode, customer_id
       ON CONFLICT DO NOTHING`,
      [JSON.stringify(customers.map(({ tenant, customerId, currency }) => ({ account_id: tenant.accountId, livemode: tenant.livemode, customer_id: customerId, currency }))), now],
    );
  }

  /** Creates the customer's balance row if it has none, then locks it: an adjustment always has a row to hold. */
  async lockOne(tx: OpenTransaction, tenant: TenantRef, customerId: string, currency: string, now: Date): Promise<Money | null> {
    await statementsOf(tx).execute(
      `INSERT INTO customer_balances (account_id, livemode, customer_id, currency, balance, updated_at) VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT DO NOTHING`,
      [tenant.accountId, tenant.livemode, customerId, currency, now],
    );
    return (await this.lockMany(tx, [{ tenant, customerId }])).get(balanceKey(tenant, customerId)) ?? null;
  }

  /**
   * Appends ledger entries and sets each customer's balance to its last entry's ending balance,
   * in two statements whatever their count. The caller holds the balances' locks.
   */
  async record(tx: OpenTransaction, entries: readonly BalanceTransaction[]): Promise<void> {
    if (entries.length === 0) return;
    const sql = statementsOf(tx);
    const ledger = insertRowsStatement('customer_balance_transactions', entries.map((entry) => ({
      id: entry.id,
      accountId: entry.tenant.accountId,
      livemode: entry.tenant.livemode,
      customerId: entry.customerId,
      type: entry.type,
      amount: toInt64(entry.amount.amountMinor),
      currency: entry.amount.currency,
      endingBalance: toInt64(entry.endingBalance.amountMinor),
      description: entry.description,
      invoiceId: entry.invoiceId,
      creditNoteId: entry.creditNoteId,
      createdAt: entry.createdAt,
    })));
    await sql.execute(ledger.sql, ledger.values);
    const last = new Map(entries.map((entry) => [balanceKey(entry.tenant, entry.customerId), entry]));
    await sql.execute(
      `INSERT INTO customer_balances AS balance (account_id, livemode, customer_id, currency, balance, updated_at)
       SELECT account_id, livemode, customer_id, currency, balance, updated_at
       FROM jsonb_to_recordset($1::jsonb) AS latest(account_id text, livemode boolean, customer_id text, currency text, balance bigint, updated_at timestamptz)
       ON CONFLICT (account_id, livemode, customer_id) DO UPDATE SET currency = EXCLUDED.currency, balance = EXCLUDED.balance, updated_at = EXCLUDED.updated_at`,
      [JSON.stringify([...last.values()].map((entry) => ({
        account_id: entry.tenant.accountId, livemode: entry.tenant.livemode, customer_id: entry.customerId,
        currency: entry.endingBalance.currency, balance: entry.endingBalance.amountMinor, updated_at: entry.createdAt,
      })))],
    );
  }

  /**
   * A final invoice's credit refund so far (minor units, positive): what its `refund` entry
   * reserved (null: none) and what its `refund_reversal` entries gave back. The caller holds the
   * customer's balance lock.
   */
  async creditRefundOf(tx: OpenTransaction, tenant: TenantRef, customerId: string, invoiceId: string): Promise<{ reserved: number | null; returned: number }> {
    const rows = await statementsOf(tx).query<{ type: string; amount: string }>(
      `SELECT type, sum(amount)::text AS amount FROM customer_balance_transactions
       WHERE account_id = $1 AND livemode = $2 AND customer_id = $3 AND invoice_id = $4 AND type IN ('refund', 'refund_reversal')
       GROUP BY type`,
      [tenant.accountId, tenant.livemode, customerId, invoiceId],
    );
    const of = (type: string) => rows.find((row) => row.type === type);
    const reserved = of('refund');
    return { reserved: reserved ? fromInt64(BigInt(reserved.amount)) : null, returned: -fromInt64(BigInt(of('refund_reversal')?.amount ?? '0')) };
  }

  /**
   * The balances of these customers of one tenant, in order (null: never had one). Every customer
   * read through `/v1` asks it: one statement on Prisma's pool, without the ORM (its query
   * planning cost more CPU than the query, as the subscription service's customer reads found).
   */
  async balances(tenant: TenantRef, customerIds: readonly string[]): Promise<(Money | null)[]> {
    if (customerIds.length === 0) return [];
    if (customerIds.length === 1) return [await this.oneBalance.read({ tenant, customerId: customerIds[0] })];
    return this.balancesOfTenant(tenant, customerIds);
  }

  private async balancesOfTenant(tenant: TenantRef, customerIds: readonly string[]): Promise<(Money | null)[]> {
    const { rows } = await this.prisma.pool.query<{ customer_id: string; currency: string; balance: string }>(
      'SELECT customer_id, currency, balance::text AS balance FROM customer_balances WHERE account_id = $1 AND livemode = $2 AND customer_id = ANY($3::text[])',
      [tenant.accountId, tenant.livemode, [...customerIds]],
    );
    const byCustomer = new Map(rows.map((row) => [row.customer_id, money(fromInt64(BigInt(row.balance)), row.currency)]));
    return customerIds.map((id) => byCustomer.get(id) ?? null);
  }

  async list(tenant: TenantRef, customerId: string, page: Page): Promise<{ transactions: BalanceTransaction[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, customerId };
    const { rows, page: info } = await readListPage(page, {
      resource: 'customer balance transaction', order: NEWEST_FIRST, where, cursorScope: where,
      findMany: (read) => this.prisma.customerBalanceTransaction.findMany(read),
      count: (query) => this.prisma.customerBalanceTransaction.count(query),
    });
    return {
      transactions: rows.map((row) => ({
        id: row.id,
        tenant,
        customerId: row.customerId,
        type: row.type as BalanceTransactionType,
        amount: money(fromInt64(row.amount), row.currency),
        endingBalance: money(fromInt64(row.endingBalance), row.currency),
        description: row.description,
        invoiceId: row.invoiceId,
        creditNoteId: row.creditNoteId,
        createdAt: row.createdAt,
      })),
      page: info,
    };
  }
}
