import { messages } from '@recur/i18n';
import { assertMove, type Invoice } from '../invoices/invoice';
import type { SellerProfile } from '../seller/seller-profile';

/** What an invoice e-mail is: the invoice itself, or a dunning reminder with its number (1, 2, …). */
export const INVOICE_MAIL_KINDS = ['invoice', 'reminder'] as const;
export type InvoiceMailKind = (typeof INVOICE_MAIL_KINDS)[number];

/**
 * One send of an invoice e-mail. `sendKey` names the send within the invoice and makes queueing
 * it idempotent: `finalized` (the mail at finalization), `resend:<request id>`, `reminder:<n>`.
 */
export type InvoiceMailRequest =
  | { kind: 'invoice'; sendKey: string; sellerName: string }
  | { kind: 'reminder'; reminderNumber: number; sellerName: string };

/**
 * The port through which use cases e-mail an invoice (at finalization, on resend, and dunning's
 * reminders). It queues the mail in the caller's transaction `tx`, so the mail exists exactly
 * when the change that asked for it commits; a worker sends it through SMTP afterwards and
 * retries it until it leaves. Queueing one send (`sendKeyOf`) twice queues one mail. Refuses a
 * draft or a void invoice (assertSendable).
 */
export abstract class InvoiceMailer<Tx> {
  /** Queues the mail and answers its id (the earlier one's when this send was queued before). */
  abstract queue(tx: Tx, invoice: Invoice, request: InvoiceMailRequest): Promise<string>;
  /** The same send of many invoices at once (a batch of renewal invoices), in one statement. */
  abstract queueAll(tx: Tx, invoices: readonly Invoice[], request: InvoiceMailRequest): Promise<void>;
}

/** The send key of the mail every finalization queues. */
export const FINALIZED_SEND_KEY = 'finalized';

export const sendKeyOf = (request: InvoiceMailRequest): string =>
  request.kind === 'reminder' ? `reminder:${request.reminderNumber}` : request.sendKey;

/** Refuses to e-mail a draft (no number yet) or a void invoice (it will not be collected). */
export function assertSendable(invoice: Invoice): void {
  assertMove(invoice, 'send');
}

/** A mail's words, before the transport adds the sender and the PDF. */
export interface ComposedMail {
  subject: string;
  text: string;
}

/** The payment link belongs in a mail only while the invoice can be paid (as on the PDF). */
const payable = (invoice: Invoice): boolean => invoice.status === 'open' || invoice.status === 'failed';

/**
 * The e-mail about `invoice` as it stands now (a mail retried after the invoice was paid says
 * so, and drops the link): the amount due, the due date and the payment link in the body. It
 * goes to the customer's e-mail as the invoice took it at finalization; the PDF travels as an
 * attachment. Written in `locale` from the message catalogues (docs/localization.md).
 */
export function composeInvoiceMail(
  invoice: Invoice, mail: { kind: InvoiceMailKind; reminderNumber: number | null }, sellerName: string, seller?: SellerProfile, locale = '',
): ComposedMail {
  const words = messages(locale);
  const number = invoice.number ?? invoice.id;
  // Each sentence has its own wording with and without the seller's name (word order differs between languages).
  const from = sellerName ? '_from' : '';
  const params = { number, seller: sellerName, reminder: mail.reminderNumber ?? 0, due_date: words.date(invoice.dueDate) };
  const subject = words.t(mail.kind === 'reminder' ? `mail.reminder.subject${from}` : `mail.invoice.subject${from}`, params);
  const lines = [words.t('mail.greeting', { name: invoice.customer.name }), ''];
  if (payable(invoice)) {
    lines.push(
      words.t(mail.kind === 'reminder' ? `mail.reminder.body${from}` : `mail.invoice.body${from}`, { ...params, amount: words.money(invoice.amountDue) }),
      '',
      words.t('mail.pay_online'),
      invoice.paymentUrl ?? '',
    );
  } else {
    lines.push(words.t(`mail.nothing_due${from}`, { ...params, amount: words.money(invoice.total), status: words.t(`invoice.status.${invoice.status}`) }));
  }
  lines.push('', words.t('mail.attached', { filename: `${number}.pdf` }));
  const contact = seller ? [seller.supportEmail, seller.supportPhone].filter(Boolean).join(words.t('mail.contact_separator')) : '';
  if (contact) lines.push('', words.t('mail.contact', { contact }));
  if (seller?.invoiceFooter) lines.push('', seller.invoiceFooter);
  return { subject, text: `${lines.join('\n')}\n` };
}
