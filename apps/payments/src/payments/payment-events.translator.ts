import { paymentsEventsV1 } from '@recur/contracts';
import { newInternalEvent, type OutboxEvent } from '@recur/messaging';
import type { PaymentEvent } from './payment';
import { toPaymentMessage } from './payment.mapper';

/**
 * The edge between the payment's domain events and what the service publishes. Payments have
 * no public webhook event of their own (the specification's are invoice.paid and
 * invoice.payment_failed, which invoicing sends when the settlement reaches it), so each becomes
 * its integration event only.
 */
export function translatePaymentEvent(event: PaymentEvent): OutboxEvent[] {
  const { payment } = event;
  const message = { payment: toPaymentMessage(payment) };
  const at = payment.settledAt ?? payment.updatedAt;
  switch (event.kind) {
    case 'succeeded':
      return [newInternalEvent(payment.tenant, payment.id, paymentsEventsV1.PaymentSucceededSchema, message, at)];
    case 'failed':
      return [newInternalEvent(payment.tenant, payment.id, paymentsEventsV1.PaymentFailedSchema, message, at)];
    case 'canceled':
      return [newInternalEvent(payment.tenant, payment.id, paymentsEventsV1.PaymentCanceledSchema, message, at)];
    case 'unapplied':
      return [newInternalEvent(payment.tenant, payment.id, paymentsEventsV1.PaymentUnappliedSchema, message, payment.updatedAt)];
  }
}
