import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { OpenTransaction } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import type { BilledCustomer, InvoiceTaxing } from '../invoices/invoice';
import { tenantKey } from '../invoices/invoices.repository';
import { chooseLineRates, createTaxRate, type NewTaxRateFields, type TaxRate, type TaxRateChanges, updateTaxRate } from './tax-rate';
import { TaxRatesRepository } from './tax-rates.repository';

type Tx = Prisma.TransactionClient;

/** What one invoice asks of the rules: its tenant, its customer, each line's own rate ids. */
export interface TaxingRequest {
  tenant: TenantRef;
  customer: BilledCustomer;
  lineRateIds: string[][];
}

/** Tax-rate use cases, and the rules that choose each invoice line's rate. */
@Injectable()
export class TaxRatesService {
  constructor(
    private readonly taxRates: TaxRatesRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: NewTaxRateFields): Promise<TaxRate> {
    const rate = createTaxRate(tenant, fields, this.now());
    await this.taxRates.insert(tx, rate);
    if (rate.accountDefault) await this.taxRates.clearOtherDefaults(tx, rate);
    return rate;
  }

  get(tenant: TenantRef, id: string): Promise<TaxRate> {
    return this.taxRates.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, active?: boolean): Promise<{ taxRates: TaxRate[]; page: PageInfo }> {
    return this.taxRates.list(tenant, page, active);
  }

  async update(tx: Tx, tenant: TenantRef, id: string, changes: TaxRateChanges): Promise<TaxRate> {
    const rate = updateTaxRate(await this.taxRates.getForUpdate(tx, tenant, id), changes, this.now());
    await this.taxRates.update(tx, rate);
    if (rate.accountDefault) await this.taxRates.clearOtherDefaults(tx, rate);
    return rate;
  }

  /** The rates of one invoice's lines (docs/api/tax-rates.md#which-rate-applies). */
  async taxing(tx: OpenTransaction, request: TaxingRequest): Promise<InvoiceTaxing> {
    return (await this.rules(tx, [request]))(request);
  }

  /**
   * The rules for many invoices, of any tenants, with the rates read in one statement: a
   * function that chooses one invoice's line rates (and throws for a line naming an unknown rate).
   */
  async rules(tx: OpenTransaction, requests: readonly TaxingRequest[]): Promise<(request: TaxingRequest) => InvoiceTaxing> {
    const asked = new Map<string, { tenant: TenantRef; namedIds: Set<string> }>();
    for (const { tenant, customer, lineRateIds } of requests) {
      if (customer.tax === undefined || customer.tax.taxExempt !== 'none') continue;
      const entry = asked.get(tenantKey(tenant)) ?? { tenant, namedIds: new Set<string>() };
      lineRateIds.flat().forEach((id) => entry.namedIds.add(id));
      asked.set(tenantKey(tenant), entry);
    }
    const rates = await this.taxRates.forRules(tx, [...asked.values()].map(({ tenant, namedIds }) => ({ tenant, namedIds: [...namedIds] })));
    return ({ tenant, customer, lineRateIds }) => chooseLineRates(lineRateIds, customer.tax, rates.filter((rate) => tenantKey(rate.tenant) === tenantKey(tenant)));
  }
}
