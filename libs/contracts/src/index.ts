export * from './grpc/binding';
export * from './grpc/errors';
export * from './public/customer';
export * from './public/webhook';
export * from './public/event-types';
export * from './tenant';

export * as commonV1 from './gen/recur/common/v1/tenant_pb';
export * as subscriptionV1 from './gen/recur/subscription/v1/subscription_service_pb';
export * as customerV1 from './gen/recur/subscription/v1/customer_pb';
export * as catalogV1 from './gen/recur/catalog/v1/catalog_service_pb';
export * as invoicingV1 from './gen/recur/invoicing/v1/invoicing_service_pb';
export * as paymentsV1 from './gen/recur/payments/v1/payments_service_pb';
export * as usageMeteringV1 from './gen/recur/usage_metering/v1/usage_metering_service_pb';
export * as webhookDispatchV1 from './gen/recur/webhook_dispatch/v1/webhook_dispatch_service_pb';
export * as eventV1 from './gen/recur/webhook_dispatch/v1/event_pb';
export * as endpointV1 from './gen/recur/webhook_dispatch/v1/endpoint_pb';
