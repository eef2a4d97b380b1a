import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type Page, type TenantRef } from '@recur/kernel';
import { appendToOutbox, eventsTopic, newIntegrationEvent } from '@recur/messaging';
import type { Prisma } from '../generated/prisma/client';
import { createCustomer, type Customer, type CustomerFields, deleteCustomer, updateCustomer } from './customer';
import { toCustomerJson } from './customer.mapper';
import { CustomersRepository } from './customers.repository';

export const SUBSCRIPTION_EVENTS_TOPIC = eventsTopic('subscription');

type Tx = Prisma.TransactionClient;

/**
 * Customer use cases. Each change and its public event are written in the command's
 * transaction (`tx`, with the outbox), so an event exists exactly when its change does.
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly customers: CustomersRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tx: Tx, tenant: TenantRef, fields: { name: string; email: string; metadata?: Record<string, string> }): Promise<Customer> {
    const customer = createCustomer(tenant, fields, this.now());
    await this.customers.insert(tx, customer);
    await appendToOutbox(tx, SUBSCRIPTION_EVENTS_TOPIC, [
      newIntegrationEvent(tenant, 'customer.created', customer.id, { object: toCustomerJson(customer) }, customer.createdAt),
    ]);
    return customer;
  }

  get(tenant: TenantRef, id: string): Promise<Customer> {
    return this.customers.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, email?: string): Promise<{ customers: Customer[]; total: number }> {
    return this.customers.list(tenant, page, email);
  }

  async update(tx: Tx, tenant: TenantRef, id: string, fields: CustomerFields): Promise<Customer> {
    const before = await this.customers.getForUpdate(tx, tenant, id);
    const after = updateCustomer(before, fields, this.now());
    await this.customers.update(tx, after);
    await appendToOutbox(tx, SUBSCRIPTION_EVENTS_TOPIC, [
      newIntegrationEvent(tenant, 'customer.updated', id, {
        object: toCustomerJson(after),
        previous_attributes: previousAttributes(before, after),
      }, after.updatedAt),
    ]);
    return after;
  }

  async delete(tx: Tx, tenant: TenantRef, id: string): Promise<Customer> {
    const deleted = deleteCustomer(await this.customers.getForUpdate(tx, tenant, id), this.now());
    await this.customers.update(tx, deleted);
    await appendToOutbox(tx, SUBSCRIPTION_EVENTS_TOPIC, [
      newIntegrationEvent(tenant, 'customer.deleted', id, { object: toCustomerJson(deleted) }, deleted.updatedAt),
    ]);
    return deleted;
  }
}

/** Stripe-style `previous_attributes`: the old value of every public field that changed. */
function previousAttributes(before: Customer, after: Customer): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  if (before.name !== after.name) previous.name = before.name;
  if (before.email !== after.email) previous.email = before.email;
  if (JSON.stringify(before.metadata) !== JSON.stringify(after.metadata)) previous.metadata = before.metadata;
  return previous;
}
