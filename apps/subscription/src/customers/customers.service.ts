import { Inject, Injectable } from '@nestjs/common';
import { type Page, type TenantRef } from '@recur/kernel';
import { appendToOutbox, eventsTopic, newIntegrationEvent } from '@recur/messaging';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../infrastructure/prisma.service';
import { createCustomer, type Customer, type CustomerFields, deleteCustomer, updateCustomer } from './customer';
import { toCustomerJson } from './customer.mapper';
import { CustomersRepository } from './customers.repository';

export const SUBSCRIPTION_EVENTS_TOPIC = eventsTopic('subscription');
export const CLOCK = Symbol('CLOCK');
export type Clock = () => Date;

/**
 * Customer use cases. Each change and its public event commit in one transaction
 * (the outbox), so an event exists exactly when its change does.
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly customers: CustomersRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async create(tenant: TenantRef, fields: { name: string; email: string; metadata?: Record<string, string> }, requestId: string | null): Promise<Customer> {
    if (requestId) {
      const earlier = await this.customers.findByRequestId(tenant, requestId);
      if (earlier) return earlier;
    }
    const customer = createCustomer(tenant, fields, this.now());
    try {
      await this.prisma.$transaction(async (tx) => {
        await this.customers.insert(tx, customer, requestId);
        await appendToOutbox(tx, SUBSCRIPTION_EVENTS_TOPIC, [
          newIntegrationEvent(tenant, 'customer.created', customer.id, { object: toCustomerJson(customer) }, customer.createdAt),
        ]);
      });
    } catch (error) {
      // A concurrent repeat of the same request won the race: answer with its customer.
      if (requestId && error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
        const earlier = await this.customers.findByRequestId(tenant, requestId);
        if (earlier) return earlier;
      }
      throw error;
    }
    return customer;
  }

  get(tenant: TenantRef, id: string): Promise<Customer> {
    return this.customers.get(tenant, id);
  }

  list(tenant: TenantRef, page: Page, email?: string): Promise<{ customers: Customer[]; total: number }> {
    return this.customers.list(tenant, page, email);
  }

  update(tenant: TenantRef, id: string, fields: CustomerFields): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
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
    });
  }

  delete(tenant: TenantRef, id: string): Promise<Customer> {
    return this.prisma.$transaction(async (tx) => {
      const deleted = deleteCustomer(await this.customers.getForUpdate(tx, tenant, id), this.now());
      await this.customers.update(tx, deleted);
      await appendToOutbox(tx, SUBSCRIPTION_EVENTS_TOPIC, [
        newIntegrationEvent(tenant, 'customer.deleted', id, { object: toCustomerJson(deleted) }, deleted.updatedAt),
      ]);
      return deleted;
    });
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
