import { createRegistry } from '@bufbuild/protobuf';
import { file_recur_invoicing_v1_events } from './gen/recur/invoicing/v1/events_pb';
import { file_recur_payments_v1_events } from './gen/recur/payments/v1/events_pb';
import { file_recur_subscription_v1_events } from './gen/recur/subscription/v1/events_pb';
import { file_recur_usage_metering_v1_events } from './gen/recur/usage_metering/v1/events_pb';

/**
 * Every integration event payload Recur defines (the `events.proto` of each service).
 * InternalEvent.payload is a google.protobuf.Any, and the proto3 JSON mapping needs the
 * payload's schema to write or read it: a new service's events.proto is added here.
 */
export const INTEGRATION_EVENTS = createRegistry(file_recur_subscription_v1_events, file_recur_invoicing_v1_events, file_recur_usage_metering_v1_events, file_recur_payments_v1_events);
