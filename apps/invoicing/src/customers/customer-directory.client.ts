import * as grpc from '@grpc/grpc-js';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { createServiceClient, type customerV1, fromGrpcError, type ServiceClient, subscriptionV1, toTenantMessage } from '@recur/contracts';
import type { TaxExemptStatus } from '@recur/vocabulary';
import type { TenantRef } from '@recur/kernel';
import { INVOICING_CONFIG, type InvoicingConfig } from '../invoicing-config';
import type { BilledCustomer, CustomerLookup } from '../invoices/invoice';

/** The customer as an invoice bills them: name, e-mail, what the tax rules read (country, region, tax status) and what finalization records (address, phone, tax ids). */
function billedCustomer(customer: customerV1.Customer): BilledCustomer {
  return {
    id: customer.id,
    name: customer.name,
    email: customer.email,
    tax: { country: customer.address?.country || null, region: customer.address?.region || null, taxExempt: (customer.taxExempt || 'none') as TaxExemptStatus },
    // An older subscription sends no tax_ids: the list is simply empty.
    details: {
      address: customer.address === undefined ? null : {
        line1: customer.address.line1 || null, line2: customer.address.line2 || null, city: customer.address.city || null,
        region: customer.address.region || null, postalCode: customer.address.postalCode || null, country: customer.address.country || null,
      },
      phone: customer.phone || null,
      taxIds: customer.taxIds.map(({ type, value }) => ({ type, value })),
    },
  };
}

/**
 * Customers live in the subscription service; invoicing asks it (SubscriptionService.GetCustomer)
 * whenever it needs one — at creation and at finalization — so what an invoice records is the
 * customer as they are at that moment, never a stale copy. The lookup runs before the command's
 * transaction: its answer (found, missing, deleted) is judged inside the command, so a refusal
 * is recorded with it, while an unreachable subscription service fails the call UNAVAILABLE
 * without recording anything (a retry asks again).
 */
@Injectable()
export class CustomerDirectory implements OnModuleDestroy {
  private readonly subscription: ServiceClient<typeof subscriptionV1.SubscriptionService>;

  constructor(@Inject(INVOICING_CONFIG) config: InvoicingConfig) {
    this.subscription = createServiceClient(subscriptionV1.SubscriptionService, config.subscriptionGrpcAddr);
  }

  /**
   * The language the customer reads (`preferred_locale`), asked when a PDF or an e-mail is written
   * so it follows the customer's latest choice; null when they have none, are gone, or subscription
   * cannot answer (the account's default_locale then applies: docs/localization.md#which-language).
   */
  async preferredLocale(tenant: TenantRef, id: string): Promise<string | null> {
    try {
      const { customer } = await this.subscription.getCustomer({ tenant: toTenantMessage(tenant), id });
      return customer?.preferredLocale || null;
    } catch {
      return null;
    }
  }

  async lookup(tenant: TenantRef, id: string): Promise<CustomerLookup> {
    if (!id.startsWith('cus_')) return { missing: id };
    try {
      const { customer } = await this.subscription.getCustomer({ tenant: toTenantMessage(tenant), id });
      if (!customer) return { missing: id };
      if (customer.deletedAt !== undefined) return { deleted: id };
      return { found: billedCustomer(customer) };
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.NOT_FOUND) return { missing: id };
      throw fromGrpcError(error);
    }
  }

  /**
   * The customer's own time now: its test clock's frozen time when it lives on one (sandbox
   * only), else `now`. The automatic retries of a failed charge are planned in it, so a test
   * clock reaches them as the billing clock reaches renewals (docs/api/dunning.md#smart-retries).
   * A clock deleted meanwhile (NOT_FOUND) leaves the customer on real time.
   */
  async ownTime(tenant: TenantRef, customerId: string, now: Date): Promise<Date> {
    if (tenant.livemode || !customerId.startsWith('cus_')) return now;
    try {
      const { customer } = await this.subscription.getCustomer({ tenant: toTenantMessage(tenant), id: customerId });
      if (!customer?.testClockId) return now;
      const { testClock } = await this.subscription.getTestClock({ tenant: toTenantMessage(tenant), id: customer.testClockId });
      return testClock ? new Date(Number(testClock.frozenTime) * 1_000) : now;
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.NOT_FOUND) return now;
      throw fromGrpcError(error);
    }
  }

  /**
   * Many customers, each of its own tenant, in one call (BatchGetCustomers): one lookup per
   * reference, in order. A subscription service that does not know the call yet (UNIMPLEMENTED,
   * an older release) is asked one customer at a time.
   */
  async lookupAll(refs: readonly { tenant: TenantRef; id: string }[]): Promise<CustomerLookup[]> {
    const asked = refs.filter((ref) => ref.id.startsWith('cus_'));
    let results: subscriptionV1.BatchGetCustomerResult[];
    try {
      results = asked.length === 0 ? [] : (await this.subscription.batchGetCustomers({ customers: asked.map(({ tenant, id }) => ({ tenant: toTenantMessage(tenant), id })) })).results;
    } catch (error) {
      if ((error as grpc.ServiceError).code === grpc.status.UNIMPLEMENTED) return Promise.all(refs.map(({ tenant, id }) => this.lookup(tenant, id)));
      throw fromGrpcError(error);
    }
    let next = 0;
    return refs.map(({ id }) => {
      if (!id.startsWith('cus_')) return { missing: id };
      const customer = results[next++]?.customer;
      if (!customer) return { missing: id };
      if (customer.deletedAt !== undefined) return { deleted: id };
      return { found: billedCustomer(customer) };
    });
  }

  onModuleDestroy(): void {
    this.subscription.close();
  }
}
