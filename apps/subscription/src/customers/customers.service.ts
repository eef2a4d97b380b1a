import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type Page, type PageInfo, type TenantRef } from '@recur/kernel';
import type { PgTransaction } from '@recur/persistence';
import type { Prisma } from '../generated/prisma/client';
import { createCustomer, type Customer, type CustomerChangeSource, type CustomerFields, deleteCustomer, updateCustomer } from './customer';
import { TestClocksRepository } from '../test-clocks/test-clocks.repository';
import { CustomersRepository } from './customers.repository';

type Tx = Prisma.TransactionClient;

/**
 * Customer use cases. The customer records its own events; saving it in the command's
 * transaction (`tx`) writes them to the outbox too, so an event exists exactly when its
 * change does.
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly customers: CustomersRepository,
    private readonly clocks: TestClocksRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: PgTransaction, tenant: TenantRef, fields: CustomerFields & { name: string; email: string; testClockId?: string }): Promise<Customer> {
    // A customer on a test clock lives in the clock's time; the clock must exist in this (sandbox) app.
    const testClockId = fields.testClockId ? (await this.clocks.forNewCustomer(tx, tenant, fields.testClockId)).id : null;
    const change = createCustomer(tenant, { ...fields, testClockId }, this.now());
    await this.customers.insert(tx, change);
    return change.customer;
  }

  get(tenant: TenantRef, id: string): Promise<Customer> {
    return this.customers.get(tenant, id);
  }

  /** Customers of many tenants at once (BatchGetCustomers): those found, by id. */
  getAll(refs: readonly { tenant: TenantRef; id: string }[]): Promise<(Customer | undefined)[]> {
    return this.customers.getAll(refs);
  }

  list(tenant: TenantRef, page: Page, email?: string): Promise<{ customers: Customer[]; page: PageInfo }> {
    return this.customers.list(tenant, page, email);
  }

  async update(tx: Tx, tenant: TenantRef, id: string, fields: CustomerFields, source: CustomerChangeSource = 'api'): Promise<Customer> {
    const change = updateCustomer(await this.customers.getForUpdate(tx, tenant, id), fields, this.now(), source);
    await this.customers.update(tx, change);
    return change.customer;
  }

  async delete(tx: Tx, tenant: TenantRef, id: string): Promise<Customer> {
    const change = deleteCustomer(await this.customers.getForUpdate(tx, tenant, id), this.now());
    await this.customers.update(tx, change);
    return change.customer;
  }
}
