import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, webhookDispatchV1 as v1 } from '@recur/contracts';
import { checkPage, pageInfo } from '@recur/kernel';
import { DeliveriesService } from './deliveries/deliveries.service';
import { EndpointsService, toEndpointMessage } from './endpoints/endpoints.service';

/** gRPC edge of endpoints and deliveries: decode, call, encode. */
@Controller()
export class WebhooksGrpcController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly deliveries: DeliveriesService,
  ) {}

  @GrpcMethod('WebhookDispatchService', 'CreateEndpoint')
  async createEndpoint(request: v1.CreateEndpointRequest): Promise<MessageInitShape<typeof v1.CreateEndpointResponseSchema>> {
    const { endpoint, created } = await this.endpoints.create(
      requireTenant(request.tenant),
      { url: request.url, events: request.events, description: request.description },
      request.requestId || null,
    );
    return { endpoint: toEndpointMessage(endpoint, created) };
  }

  @GrpcMethod('WebhookDispatchService', 'ListEndpoints')
  async listEndpoints(request: v1.ListEndpointsRequest): Promise<MessageInitShape<typeof v1.ListEndpointsResponseSchema>> {
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { endpoints, total } = await this.endpoints.list(requireTenant(request.tenant), page);
    return { endpoints: endpoints.map((endpoint) => toEndpointMessage(endpoint)), page: pageInfo(page, endpoints.length, total) };
  }

  @GrpcMethod('WebhookDispatchService', 'UpdateEndpoint')
  async updateEndpoint(request: v1.UpdateEndpointRequest): Promise<MessageInitShape<typeof v1.UpdateEndpointResponseSchema>> {
    const endpoint = await this.endpoints.update(requireTenant(request.tenant), request.id, {
      url: request.url,
      events: request.setEvents ? request.events : undefined,
      status: request.status,
      description: request.description,
    });
    return { endpoint: toEndpointMessage(endpoint) };
  }

  @GrpcMethod('WebhookDispatchService', 'DeleteEndpoint')
  async deleteEndpoint(request: v1.DeleteEndpointRequest): Promise<MessageInitShape<typeof v1.DeleteEndpointResponseSchema>> {
    return { endpoint: toEndpointMessage(await this.endpoints.delete(requireTenant(request.tenant), request.id)) };
  }

  @GrpcMethod('WebhookDispatchService', 'SendTestEvent')
  async sendTestEvent(request: v1.SendTestEventRequest): Promise<MessageInitShape<typeof v1.SendTestEventResponseSchema>> {
    return { delivery: await this.deliveries.sendTest(requireTenant(request.tenant), request.id) };
  }

  @GrpcMethod('WebhookDispatchService', 'ListDeliveries')
  async listDeliveries(request: v1.ListDeliveriesRequest): Promise<MessageInitShape<typeof v1.ListDeliveriesResponseSchema>> {
    const page = checkPage(request.page?.limit, request.page?.offset);
    const { deliveries, total } = await this.deliveries.list(requireTenant(request.tenant), request.endpointId, page);
    return { deliveries, page: pageInfo(page, deliveries.length, total) };
  }

  @GrpcMethod('WebhookDispatchService', 'RetryDelivery')
  async retryDelivery(request: v1.RetryDeliveryRequest): Promise<MessageInitShape<typeof v1.RetryDeliveryResponseSchema>> {
    return { delivery: await this.deliveries.retry(requireTenant(request.tenant), request.endpointId, request.deliveryId) };
  }
}
