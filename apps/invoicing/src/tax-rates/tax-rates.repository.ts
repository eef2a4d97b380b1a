import { Injectable } from '@nestjs/common';
import { notFound, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import { NEWEST_FIRST, type OpenTransaction, readListPage, statementsOf } from '@recur/persistence';
import type { Prisma, TaxRate as TaxRateRow } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import type { TaxRate } from './tax-rate';
import { fromTaxRateRow, toTaxRateRow } from './tax-rate.mapper';

type Tx = Prisma.TransactionClient;

/** Tax rates in the service's database; every query is scoped to one tenant. */
@Injectable()
export class TaxRatesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async get(tenant: TenantRef, id: string, tx: Tx = this.prisma): Promise<TaxRate> {
    const row = await tx.taxRate.findFirst({ where: { id, accountId: tenant.accountId, livemode: tenant.livemode } });
    if (!row) throw notFound('tax rate', id);
    return fromTaxRateRow(row);
  }

  async getForUpdate(tx: Tx, tenant: TenantRef, id: string): Promise<TaxRate> {
    await tx.$executeRaw`SELECT 1 FROM tax_rates WHERE id = ${id} AND account_id = ${tenant.accountId} AND livemode = ${tenant.livemode} FOR UPDATE`;
    return this.get(tenant, id, tx);
  }

  async list(tenant: TenantRef, page: Page, active?: boolean): Promise<{ taxRates: TaxRate[]; page: PageInfo }> {
    const where = { accountId: tenant.accountId, livemode: tenant.livemode, ...(active === undefined ? {} : { active }) };
    const { rows, page: info } = await readListPage(page, {
      resource: 'tax rate', order: NEWEST_FIRST, where, cursorScope: { accountId: tenant.accountId, livemode: tenant.livemode },
      findMany: (read) => this.prisma.taxRate.findMany(read),
      count: (query) => this.prisma.taxRate.count(query),
    });
    return { taxRates: rows.map(fromTaxRateRow), page: info };
  }

  async insert(tx: Tx, rate: TaxRate): Promise<void> {
    await tx.taxRate.create({ data: toTaxRateRow(rate) });
  }

  async update(tx: Tx, rate: TaxRate): Promise<void> {
    const { id: _id, accountId: _accountId, livemode: _livemode, ratePpm: _ratePpm, inclusive: _inclusive, createdAt: _createdAt, ...columns } = toTaxRateRow(rate);
    await tx.taxRate.update({ where: { id: rate.id }, data: columns });
  }

  /** The app has one account default: setting one clears the others, in the same transaction. */
  async clearOtherDefaults(tx: Tx, rate: TaxRate): Promise<void> {
    await tx.taxRate.updateMany({ where: { accountId: rate.tenant.accountId, livemode: rate.tenant.livemode, accountDefault: true, id: { not: rate.id } }, data: { accountDefault: false, updatedAt: rate.updatedAt } });
  }

  /**
   * What the rules choose from, for each tenant asked (one statement whatever their count):
   * its active rates and the rates its lines name, archived or not.
   */
  async forRules(tx: OpenTransaction, asked: readonly { tenant: TenantRef; namedIds: readonly string[] }[]): Promise<TaxRate[]> {
    if (asked.length === 0) return [];
    const rows = await statementsOf(tx).query<Record<string, unknown>>(
      `SELECT rate.* FROM tax_rates rate
       JOIN jsonb_to_recordset($1::jsonb) AS asked(account_id text, livemode boolean, named text[])
         ON rate.account_id = asked.account_id AND rate.livemode = asked.livemode AND (rate.active OR rate.id = ANY(asked.named))`,
      [JSON.stringify(asked.map(({ tenant, namedIds }) => ({ account_id: tenant.accountId, livemode: tenant.livemode, named: namedIds })))],
    );
    return rows.map((row) => fromTaxRateRow({
      id: row.id, accountId: row.account_id, livemode: row.livemode, displayName: row.display_name, description: row.description, ratePpm: row.rate_ppm,
      inclusive: row.inclusive, country: row.country, region: row.region, active: row.active, accountDefault: row.account_default, metadata: row.metadata,
      createdAt: row.created_at, updatedAt: row.updated_at,
    } as TaxRateRow));
  }
}
