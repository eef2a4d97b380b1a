import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, subscriptionV1 } from '@recur/contracts';
import { checkListPage, invalidArgument } from '@recur/kernel';
import { checkChangeSource } from './customer';
import { fromAddressMessage, toCustomerMessage } from './customer.mapper';
import { CustomersService } from './customers.service';
import { Commands, PgCommands } from '../infrastructure/commands';

/** The most customers one BatchGetCustomers call names (invoicing's batches carry at most 500 invoices). */
const BATCH_GET_CUSTOMERS_MAX = 500;

/** gRPC edge of the customer use cases: decode, call, encode. No rules live here. */
@Controller()
export class CustomersGrpcController {
  constructor(
    private readonly customers: CustomersService,
    private readonly commands: Commands,
    private readonly pgCommands: PgCommands,
  ) {}

  @GrpcMethod('SubscriptionService', 'CreateCustomer')
  async createCustomer(request: subscriptionV1.CreateCustomerRequest): Promise<subscriptionV1.CreateCustomerResponse> {
    const tenant = requireTenant(request.tenant);
    return this.pgCommands.run(tenant, request, subscriptionV1.CreateCustomerResponseSchema, async (tx) => ({
      customer: toCustomerMessage(await this.customers.create(tx, tenant, { name: request.name, email: request.email, metadata: request.metadata, testClockId: request.testClockId, address: fromAddressMessage(request.address), taxExempt: request.taxExempt, preferredLocale: request.preferredLocale, phone: request.phone, taxIds: request.taxIds })),
    }));
  }

  @GrpcMethod('SubscriptionService', 'GetCustomer')
  async getCustomer(request: subscriptionV1.GetCustomerRequest): Promise<MessageInitShape<typeof subscriptionV1.GetCustomerResponseSchema>> {
    return { customer: toCustomerMessage(await this.customers.get(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('SubscriptionService', 'ListCustomers')
  async listCustomers(request: subscriptionV1.ListCustomersRequest): Promise<MessageInitShape<typeof subscriptionV1.ListCustomersResponseSchema>> {
    const { customers, page } = await this.customers.list(requireTenant(request.tenant), checkListPage(request.page), request.email);
    return { customers: customers.map(toCustomerMessage), page };
  }

  @GrpcMethod('SubscriptionService', 'UpdateCustomer')
  async updateCustomer(request: subscriptionV1.UpdateCustomerRequest): Promise<subscriptionV1.UpdateCustomerResponse> {
    const tenant = requireTenant(request.tenant);
    const metadata = Object.keys(request.metadata).length > 0 ? request.metadata : undefined;
    return this.commands.run(tenant, request, subscriptionV1.UpdateCustomerResponseSchema, async (tx) => ({
      customer: toCustomerMessage(
        await this.customers.update(tx, tenant, request.id, { name: request.name, email: request.email, metadata, address: request.clearAddress ? null : fromAddressMessage(request.address), taxExempt: request.taxExempt, preferredLocale: request.preferredLocale, phone: request.phone, taxIds: request.taxIds?.taxIds }, checkChangeSource(request.source)),
      ),
    }));
  }

  @GrpcMethod('SubscriptionService', 'DeleteCustomer')
  async deleteCustomer(request: subscriptionV1.DeleteCustomerRequest): Promise<subscriptionV1.DeleteCustomerResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, subscriptionV1.DeleteCustomerResponseSchema, async (tx) => ({
      customer: toCustomerMessage(await this.customers.delete(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('SubscriptionService', 'BatchGetCustomers')
  async batchGetCustomers(request: subscriptionV1.BatchGetCustomersRequest): Promise<MessageInitShape<typeof subscriptionV1.BatchGetCustomersResponseSchema>> {
    if (request.customers.length > BATCH_GET_CUSTOMERS_MAX) throw invalidArgument('customers', `A batch names at most ${BATCH_GET_CUSTOMERS_MAX} customers`);
    const refs = request.customers.map((ref) => ({ tenant: requireTenant(ref.tenant), id: ref.id }));
    const found = await this.customers.getAll(refs);
    return { results: found.map((customer) => (customer ? { customer: toCustomerMessage(customer) } : {})) };
  }
}
