import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { catalogV1, createServiceClient, invoicingV1, paymentsV1, type ServiceClient, subscriptionV1, usageMeteringV1, webhookDispatchV1 } from '@recur/contracts';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config';

/** The gRPC clients of the services the gateway translates to; one channel each, reused. */
@Injectable()
export class ServiceClients implements OnModuleDestroy {
  readonly catalog: ServiceClient<typeof catalogV1.CatalogService>;
  readonly subscription: ServiceClient<typeof subscriptionV1.SubscriptionService>;
  readonly invoicing: ServiceClient<typeof invoicingV1.InvoicingService>;
  readonly payments: ServiceClient<typeof paymentsV1.PaymentsService>;
  readonly webhookDispatch: ServiceClient<typeof webhookDispatchV1.WebhookDispatchService>;
  readonly usageMetering: ServiceClient<typeof usageMeteringV1.UsageMeteringService>;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.catalog = createServiceClient(catalogV1.CatalogService, config.peers.catalog, {}, config.grpcDeadlineMs);
    this.subscription = createServiceClient(subscriptionV1.SubscriptionService, config.peers.subscription, {}, config.grpcDeadlineMs);
    this.invoicing = createServiceClient(invoicingV1.InvoicingService, config.peers.invoicing, {}, config.grpcDeadlineMs);
    this.webhookDispatch = createServiceClient(webhookDispatchV1.WebhookDispatchService, config.peers.webhookDispatch, {}, config.grpcDeadlineMs);
    this.usageMetering = createServiceClient(usageMeteringV1.UsageMeteringService, config.peers.usageMetering, {}, config.grpcDeadlineMs);
    this.payments = createServiceClient(paymentsV1.PaymentsService, config.peers.payments, {}, config.grpcDeadlineMs);
  }

  onModuleDestroy(): void {
    this.catalog.close();
    this.subscription.close();
    this.invoicing.close();
    this.payments.close();
    this.webhookDispatch.close();
    this.usageMetering.close();
  }
}
