import { formatMoney } from '@recur/money';
import { day, type PdfContext, renderDocumentPdf, taxLabel } from '../invoices/invoice-pdf';
import type { CreditNote } from './credit-note';

const REASON_WORDS: Record<CreditNote['reason'], string> = {
  duplicate: 'Duplicate payment',
  fraudulent: 'Fraudulent payment',
  requested_by_customer: 'Requested by the customer',
};

/** The credit note as a PDF, laid out as the invoices are: one line, the amount refunded (all or part of what was paid). */
export function renderCreditNotePdf(note: CreditNote, context: PdfContext): Promise<Uint8Array> {
  const amount = formatMoney(note.amount);
  return renderDocumentPdf({
    title: 'Credit note',
    reference: note.number,
    issued: note.createdAt,
    facts: [
      ['Credit note number', note.number],
      ['Date of issue', day(note.createdAt)],
      ['Invoice', note.invoiceNumber],
      ['Reason', REASON_WORDS[note.reason]],
    ],
    customer: note.customer,
    description: null,
    lines: [{ description: `Refund of invoice ${note.invoiceNumber}`, quantity: 1, amount: note.amount }],
    totals: [
      // The tax given back is part of the amount credited, as on the invoice (same wording).
      ...note.taxAmounts.map((tax): [string, string, boolean] => [`${taxLabel(tax)} on ${formatMoney(tax.taxableAmount)}`, formatMoney(tax.amount), false]),
      ['Total credited', amount, true],
    ],
    payLink: null,
    mark: 'CREDIT NOTE',
  }, context);
}
