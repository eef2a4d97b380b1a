import type { Prisma } from '../generated/prisma/client';
import type { Invoice } from '../invoices/invoice';
import type { InvoiceMailRequest } from './invoice-mail';

/**
 * The port through which use cases e-mail an invoice (at finalization, on resend, and dunning's
 * reminders). It queues the mail in the caller's transaction, so the mail exists exactly when
 * the change that asked for it commits; a worker sends it through SMTP afterwards and retries
 * it until it leaves. Queueing one send (`sendKeyOf`) twice queues one mail.
 */
export abstract class InvoiceMailer {
  /** Queues the mail and answers its id (the earlier one's when this send was queued before). */
  abstract queue(tx: Prisma.TransactionClient, invoice: Invoice, request: InvoiceMailRequest): Promise<string>;
}
