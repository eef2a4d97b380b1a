import { invoicingEventsV1 } from '@recur/contracts';
import { unixSeconds } from '@recur/kernel';
import { newInternalEvent, newPublicEvent, type OutboxEvent, type PublicEventData } from '@recur/messaging';
import { toCreditNoteJson } from '../credit-notes/credit-note.mapper';
import type { InvoiceEvent } from './invoice';
import { toInvoiceJson, toInvoiceMessage } from './invoice.mapper';

/**
 * The edge between the invoice aggregate's domain events and what the service publishes:
 * each becomes its integration event for other services and, where the specification
 * defines one, its public webhook event. Both are written to the outbox with the change.
 *
 * `invoice.created` means "raised to be paid" (the specification: it carries the payment
 * link), so it is published when an invoice is finalized — at creation with status `open`,
 * on finalize of a draft, or for a renewal — never for a draft. `data.source` says which
 * path raised it (`manual`, `subscription_cycle`, …), the same as the invoice's billing_reason.
 * `invoice.paid` and `invoice.payment_failed` name the payment (`data.payment`), the latter
 * with the provider's reason (`data.failure_code`), the attempts so far (`data.attempt_count`)
 * and the next automatic retry (`data.next_payment_attempt`, null when none: Stripe's names).
 */
export function translateInvoiceEvent(event: InvoiceEvent): OutboxEvent[] {
  const { invoice } = event;
  const { tenant, id } = invoice;
  const message = toInvoiceMessage(invoice);
  switch (event.kind) {
    case 'created':
      return [newInternalEvent(tenant, id, invoicingEventsV1.InvoiceCreatedSchema, { invoice: message }, invoice.createdAt)];
    case 'finalized': {
      const data: PublicEventData & { source: string } = { object: toInvoiceJson(invoice), source: invoice.billingReason };
      return [
        newInternalEvent(tenant, id, invoicingEventsV1.InvoiceFinalizedSchema, { invoice: message }, invoice.updatedAt),
        newPublicEvent(tenant, 'invoice.created', id, data, invoice.updatedAt),
      ];
    }
    case 'voided':
      return [
        newInternalEvent(tenant, id, invoicingEventsV1.InvoiceVoidedSchema, { invoice: message }, invoice.updatedAt),
        newPublicEvent(tenant, 'invoice.voided', id, { object: toInvoiceJson(invoice) }, invoice.updatedAt),
      ];
    case 'paid': {
      // No payment when nothing was due (paid at finalization).
      const data: PublicEventData & { payment: string | null } = { object: toInvoiceJson(invoice), payment: event.paymentId || null };
      return [
        newInternalEvent(tenant, id, invoicingEventsV1.InvoicePaidSchema, { invoice: message, paymentId: event.paymentId }, invoice.updatedAt),
        newPublicEvent(tenant, 'invoice.paid', id, data, invoice.updatedAt),
      ];
    }
    case 'payment_failed': {
      const nextAttempt = event.paymentRetryAt[0];
      const data: PublicEventData & { payment: string; failure_code: string; attempt_count: number; next_payment_attempt: number | null } = {
        object: toInvoiceJson(invoice), payment: event.paymentId, failure_code: event.failureCode,
        attempt_count: event.attemptCount, next_payment_attempt: nextAttempt ? unixSeconds(nextAttempt) : null,
      };
      return [
        newInternalEvent(
          tenant, id, invoicingEventsV1.InvoicePaymentFailedSchema,
          {
            invoice: message, paymentId: event.paymentId, failureCode: event.failureCode, dunningScheduleDays: event.dunningScheduleDays,
            attemptCount: event.attemptCount, paymentRetryAt: event.paymentRetryAt.map((at) => BigInt(unixSeconds(at))),
            failedAt: event.failedAt ? BigInt(unixSeconds(event.failedAt)) : 0n,
          },
          invoice.updatedAt,
        ),
        newPublicEvent(tenant, 'invoice.payment_failed', id, data, invoice.updatedAt),
      ];
    }
    case 'credit_note_issued': {
      const data: PublicEventData & { invoice: object } = { object: toCreditNoteJson(event.creditNote), invoice: toInvoiceJson(invoice) };
      // Keyed by the invoice, as invoice.refunded is, so the two keep their order (and `resource=in_…` finds it).
      return [newPublicEvent(tenant, 'credit_note.created', id, data, event.creditNote.createdAt)];
    }
    case 'refunded': {
      const data: PublicEventData & { credit_note: object } = { object: toInvoiceJson(invoice), credit_note: toCreditNoteJson(event.creditNote) };
      return [newPublicEvent(tenant, 'invoice.refunded', id, data, invoice.updatedAt)];
    }
    case 'dunning_reminder': {
      // Public only: the subscription service runs the schedule and needs no echo of it.
      // Reminders come after the last automatic attempt: none is planned any more.
      const data: PublicEventData & { reminder: number; reminder_count: number; final: boolean; attempt_count: number; next_payment_attempt: null } = {
        object: toInvoiceJson(invoice), reminder: event.reminderNumber, reminder_count: event.reminderCount, final: event.reminderNumber === event.reminderCount,
        attempt_count: invoice.paymentAttemptCount, next_payment_attempt: null,
      };
      return [newPublicEvent(tenant, 'invoice.dunning_retry', id, data, event.at)];
    }
  }
}
