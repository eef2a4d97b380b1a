import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import {
  presentDelivery,
  presentWebhookEndpoint,
  SUBSCRIBABLE_EVENT_TYPES,
  toTenantMessage,
  type WebhookDeliveryJson,
  type WebhookEndpointJson,
} from '@recur/contracts';
import type { Request } from 'express';
import { callerOf, requestState } from '../http/request-context';
import { type ListEnvelope, listEnvelope, ListQueryDto } from '../http/list';
import { ServiceClients } from '../infrastructure/service-clients';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto } from './webhooks.dto';

/** `/v1/webhooks` → WebhookDispatchService. */
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly services: ServiceClients) {}

  @Post()
  @HttpCode(201)
  async create(@Req() request: Request, @Body() body: CreateWebhookEndpointDto): Promise<WebhookEndpointJson> {
    const { endpoint } = await this.services.webhookDispatch.createEndpoint({
      tenant: toTenantMessage(callerOf(request).tenant),
      url: body.url,
      events: body.events,
      description: body.description ?? '',
      requestId: requestState(request).commandId,
    });
    return presentWebhookEndpoint(endpoint!);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: ListQueryDto): Promise<ListEnvelope<WebhookEndpointJson>> {
    const { endpoints, page } = await this.services.webhookDispatch.listEndpoints({
      tenant: toTenantMessage(callerOf(request).tenant),
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
    });
    return listEnvelope('/v1/webhooks', endpoints.map(presentWebhookEndpoint), query, page);
  }

  /** The 22 subscribable types with their meanings (`webhook.test` is sent on request only). */
  @Get('events')
  events(): { object: 'list'; url: string; data: { type: string; description: string }[]; total: number } {
    const data = Object.entries(SUBSCRIBABLE_EVENT_TYPES).map(([type, description]) => ({ type, description }));
    return { object: 'list', url: '/v1/webhooks/events', data, total: data.length };
  }

  @Patch(':id')
  async update(@Req() request: Request, @Param('id') id: string, @Body() body: UpdateWebhookEndpointDto): Promise<WebhookEndpointJson> {
    const { endpoint } = await this.services.webhookDispatch.updateEndpoint({
      tenant: toTenantMessage(callerOf(request).tenant),
      id,
      url: body.url,
      events: body.events ?? [],
      setEvents: body.events !== undefined,
      status: body.status,
      description: body.description,
    });
    return presentWebhookEndpoint(endpoint!);
  }

  @Delete(':id')
  async remove(@Req() request: Request, @Param('id') id: string): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
    const { endpoint } = await this.services.webhookDispatch.deleteEndpoint({ tenant: toTenantMessage(callerOf(request).tenant), id });
    return { id: endpoint!.id, object: 'webhook_endpoint', deleted: true };
  }

  /** Queues a `webhook.test` event for this endpoint only; 202: the attempt follows. */
  @Post(':id/test')
  @HttpCode(202)
  async test(@Req() request: Request, @Param('id') id: string): Promise<WebhookDeliveryJson> {
    const { delivery } = await this.services.webhookDispatch.sendTestEvent({ tenant: toTenantMessage(callerOf(request).tenant), id });
    return presentDelivery(delivery!);
  }

  @Get(':id/deliveries')
  async deliveries(@Req() request: Request, @Param('id') id: string, @Query() query: ListQueryDto): Promise<ListEnvelope<WebhookDeliveryJson>> {
    const { deliveries, page } = await this.services.webhookDispatch.listDeliveries({
      tenant: toTenantMessage(callerOf(request).tenant),
      endpointId: id,
      page: { limit: query.limit ?? 0, offset: query.offset ?? 0 },
    });
    return listEnvelope(`/v1/webhooks/${id}/deliveries`, deliveries.map(presentDelivery), query, page);
  }

  /** Sends the delivery's event again now, same event id; 202: the attempt follows. */
  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  async retry(@Req() request: Request, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<WebhookDeliveryJson> {
    const { delivery } = await this.services.webhookDispatch.retryDelivery({ tenant: toTenantMessage(callerOf(request).tenant), endpointId: id, deliveryId });
    return presentDelivery(delivery!);
  }
}
