import type { MessageInitShape } from '@bufbuild/protobuf';
import { Controller } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requireTenant, webhookDispatchV1 as v1 } from '@recur/contracts';
import { checkListPage } from '@recur/kernel';
import { DeliveriesService } from './deliveries/deliveries.service';
import { EndpointsService, toEndpointMessage } from './endpoints/endpoints.service';
import { Commands } from './infrastructure/commands';

/** gRPC edge of endpoints and deliveries: decode, call, encode. */
@Controller()
export class WebhooksGrpcController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly deliveries: DeliveriesService,
    private readonly commands: Commands,
  ) {}

  @GrpcMethod('WebhookDispatchService', 'CreateEndpoint')
  async createEndpoint(request: v1.CreateEndpointRequest): Promise<v1.CreateEndpointResponse> {
    const tenant = requireTenant(request.tenant);
    // A repeat answers the first answer, secret included: the caller may have lost it with the first answer.
    return this.commands.run(tenant, request, v1.CreateEndpointResponseSchema, async (tx) => ({
      endpoint: toEndpointMessage(await this.endpoints.create(tx, tenant, { url: request.url, events: request.events, description: request.description }), true),
    }));
  }

  @GrpcMethod('WebhookDispatchService', 'ListEndpoints')
  async listEndpoints(request: v1.ListEndpointsRequest): Promise<MessageInitShape<typeof v1.ListEndpointsResponseSchema>> {
    const page = checkListPage(request.page);
    const { endpoints, page: info } = await this.endpoints.list(requireTenant(request.tenant), page);
    return { endpoints: endpoints.map((endpoint) => toEndpointMessage(endpoint)), page: info };
  }

  @GrpcMethod('WebhookDispatchService', 'UpdateEndpoint')
  async updateEndpoint(request: v1.UpdateEndpointRequest): Promise<v1.UpdateEndpointResponse> {
    const tenant = requireTenant(request.tenant);
    const changes = { url: request.url, events: request.setEvents ? request.events : undefined, status: request.status, description: request.description };
    return this.commands.run(tenant, request, v1.UpdateEndpointResponseSchema, async (tx) => ({
      endpoint: toEndpointMessage(await this.endpoints.update(tx, tenant, request.id, changes)),
    }));
  }

  @GrpcMethod('WebhookDispatchService', 'DeleteEndpoint')
  async deleteEndpoint(request: v1.DeleteEndpointRequest): Promise<v1.DeleteEndpointResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, v1.DeleteEndpointResponseSchema, async (tx) => ({
      endpoint: toEndpointMessage(await this.endpoints.delete(tx, tenant, request.id)),
    }));
  }

  @GrpcMethod('WebhookDispatchService', 'SendTestEvent')
  async sendTestEvent(request: v1.SendTestEventRequest): Promise<v1.SendTestEventResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, v1.SendTestEventResponseSchema, async (tx) => ({ delivery: await this.deliveries.sendTest(tx, tenant, request.id) }));
  }

  @GrpcMethod('WebhookDispatchService', 'ListDeliveries')
  async listDeliveries(request: v1.ListDeliveriesRequest): Promise<MessageInitShape<typeof v1.ListDeliveriesResponseSchema>> {
    const page = checkListPage(request.page);
    const { deliveries, page: info } = await this.deliveries.list(requireTenant(request.tenant), request.endpointId, page);
    return { deliveries, page: info };
  }

  /** A read: the secret is stored as is because it must sign; only the portal asks for it. */
  @GrpcMethod('WebhookDispatchService', 'RevealEndpointSecret')
  async revealEndpointSecret(request: v1.RevealEndpointSecretRequest): Promise<MessageInitShape<typeof v1.RevealEndpointSecretResponseSchema>> {
    const endpoint = await this.endpoints.get(requireTenant(request.tenant), request.id);
    return { secret: endpoint.secret };
  }

  @GrpcMethod('WebhookDispatchService', 'RetryDelivery')
  async retryDelivery(request: v1.RetryDeliveryRequest): Promise<v1.RetryDeliveryResponse> {
    const tenant = requireTenant(request.tenant);
    return this.commands.run(tenant, request, v1.RetryDeliveryResponseSchema, async (tx) => ({
      delivery: await this.deliveries.retry(tx, tenant, request.endpointId, request.deliveryId),
    }));
  }
}
