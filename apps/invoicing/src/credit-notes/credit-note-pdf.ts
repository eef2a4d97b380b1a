import { messages } from '@recur/i18n';
import { type PdfContext, renderDocumentPdf, taxLabel } from '../invoices/invoice-pdf';
import type { CustomerDetails } from '../invoices/invoice';
import type { CreditNote } from './credit-note';

/**
 * The credit note as a PDF, laid out as the invoices are: one line, the amount refunded or
 * credited (all or part of the invoice). Its Bill to block is its invoice's, as recorded when the
 * invoice was finalized (`billTo`: the invoice's customer details).
 */
export function renderCreditNotePdf(note: CreditNote, context: PdfContext, billTo: CustomerDetails | null): Promise<Uint8Array> {
  const words = messages(context.locale ?? '');
  return renderDocumentPdf({
    title: words.t('document.credit_note'),
    reference: note.number,
    issued: note.createdAt,
    facts: [
      [words.t('credit_note.number'), note.number],
      [words.t('credit_note.date_of_issue'), words.date(note.createdAt)],
      [words.t('credit_note.invoice'), note.invoiceNumber],
      [words.t('credit_note.reason'), words.t(`credit_note.reason.${note.reason}`)],
      ...(note.memo ? [[words.t('credit_note.memo'), note.memo] as [string, string]] : []),
    ],
    customer: { ...note.customer, details: billTo },
    description: null,
    lines: [{ description: words.t(note.creditedTo === 'refund' ? 'credit_note.refund_line' : 'credit_note.credit_line', { invoice: note.invoiceNumber }), quantity: 1, amount: note.amount }],
    totals: [
      // The tax given back is part of the amount credited, as on the invoice (same wording).
      ...note.taxAmounts.map((tax): [string, string, boolean] => [words.t('invoice.tax_on', { tax: taxLabel(words, tax), taxable: words.money(tax.taxableAmount) }), words.money(tax.amount), false]),
      [words.t('credit_note.total_credited'), words.money(note.amount), true],
    ],
    payLink: null,
    mark: words.t('document.mark.credit_note'),
  }, context);
}
