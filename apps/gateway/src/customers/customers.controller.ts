import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { type CustomerJson, presentCustomer, toTenantMessage } from '@recur/contracts';
import type { Request } from 'express';
import { callerOf, requestState } from '../http/request-context';
import { type ListEnvelope, listEnvelope } from '../http/list';
import { ServiceClients } from '../infrastructure/service-clients';
import { CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './customers.dto';

/** `/v1/customers` → SubscriptionService. Validation happened in the pipe; rules live in the service. */
@Controller('v1/customers')
export class CustomersController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreateCustomerDto): Promise<CustomerJson> {
    const { customer } = await this.services.subscription.createCustomer({
      tenant: toTenantMessage(callerOf(request).tenant),
      name: body.name,
      email: body.email,
      metadata: body.metadata ?? {},
      requestId: requestState(request).commandId,
    });
    return presentCustomer(customer!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListCustomersQueryDto): Promise<ListEnvelope<CustomerJson>> {
    const { customers, page } = await this.services.subscription.listCustomers({
      tenant: toTenantMessage(callerOf(request).tenant),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
      email: query.email,
    });
    return listEnvelope('/v1/customers', customers.map(presentCustomer), query, page);
  }

  @Get(':id')
  async retrieve(@Req() request: Request, @Param('id') id: string): Promise<CustomerJson> {
    const { customer } = await this.services.subscription.getCustomer({ tenant: toTenantMessage(callerOf(request).tenant), id });
    return presentCustomer(customer!);
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdateCustomerDto): Promise<CustomerJson> {
    const { customer } = await this.services.subscription.updateCustomer({
      tenant: toTenantMessage(callerOf(request).tenant),
      id,
      name: body.name,
      email: body.email,
      metadata: body.metadata ?? {},
    });
    return presentCustomer(customer!);
  }

  @Delete(':id')
  async remove(@Req() request: Request, @Param('id') id: string): Promise<CustomerJson> {
    const { customer } = await this.services.subscription.deleteCustomer({ tenant: toTenantMessage(callerOf(request).tenant), id });
    return presentCustomer(customer!);
  }
}
