import { presentUsageAlert, usageEventsV1 } from '@recur/contracts';
import { newInternalEvent, newPublicEvent, type OutboxEvent } from '@recur/messaging';
import type { UsageAlert } from './usage';
import { toAlertMessage } from './usage.mapper';

/**
 * A recorded alert becomes the integration event `UsageThresholdReached` and the public
 * `usage.threshold_reached`, whose `data.object` is the alert as `/v1/usage/alerts` shows it
 * (subscription, metric_name, threshold, usage, limit, period). Keyed by the subscription, so
 * one subscription's alerts stay ordered.
 */
export function translateUsageAlert(alert: UsageAlert): OutboxEvent[] {
  const message = toAlertMessage(alert);
  return [
    newInternalEvent(alert.tenant, alert.subscriptionId, usageEventsV1.UsageThresholdReachedSchema, { alert: message }, alert.created),
    newPublicEvent(alert.tenant, 'usage.threshold_reached', alert.subscriptionId, { object: presentUsageAlert(message) }, alert.created),
  ];
}
