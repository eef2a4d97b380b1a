import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type Page, type TenantRef } from '@recur/kernel';
import { createOnce } from '@recur/persistence';
import { PrismaService } from '../infrastructure/prisma.service';
import { createCustomer, type Customer, type CustomerFields, deleteCustomer, updateCustomer } from './customer';
import { CustomersRepository } from './customers.repository';

/**
 * Customer use cases. The customer records its own events; saving it writes them to the
 * outbox in the same transaction, so an event exists exactly when its change does.
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly customers: CustomersRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  create(tenant: TenantRef, fields: { name: string; email: string; metadata?: Record<string, string> }, requestId: string | null): Promise<Customer> {
    return createOnce(requestId, (id) => this.customers.findByRequestId(tenant, id), async () => {
      const change = createCustomer(tenant, fields, this.now());
      await this.prisma.$transaction((tx) => this.customers.insert(tx, change, requestId));
      return change.customer;
    });
  }

  get(tenant: TenantRef, id: string): Promise<Customer> {
    return this.customers.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, email?: string): Promise<{ customers: Customer[]; total: number }> {
    return this.customers.list(tenant, page, email);
  }

  update(tenant: TenantRef, id: string, fields: CustomerFields): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const change = updateCustomer(await this.customers.getForUpdate(tx, tenant, id), fields, this.now());
      await this.customers.update(tx, change);
      return change.customer;
    });
  }

  delete(tenant: TenantRef, id: string): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const change = deleteCustomer(await this.customers.getForUpdate(tx, tenant, id), this.now());
      await this.customers.update(tx, change);
      return change.customer;
    });
  }
}
