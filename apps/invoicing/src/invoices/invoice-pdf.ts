import { dirname, join } from 'node:path';
import { formatMoney, type Money } from '@recur/money';
import PDFDocument from 'pdfkit';
import type { Invoice } from './invoice';

/**
 * DejaVu Sans (shipped by the `dejavu-fonts-ttf` package) rather than the 14 standard PDF
 * fonts, which cover Western European text only: customer names and currency signs (₹, ₦, ₴)
 * in other scripts print as written. pdfkit embeds only the glyphs used.
 */
const FONT_DIR = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const REGULAR = join(FONT_DIR, 'DejaVuSans.ttf');
const BOLD = join(FONT_DIR, 'DejaVuSans-Bold.ttf');

/** The big mark across a document that must not be paid as it stands. */
const STATUS_MARKS: Partial<Record<Invoice['status'], string>> = { draft: 'DRAFT', paid: 'PAID', void: 'VOID', refunded: 'REFUNDED' };

export interface PdfContext {
  /** The issuing business, printed as the seller (the account's name). */
  sellerName: string;
}

const day = (date: Date): string => date.toISOString().slice(0, 10);

/**
 * The invoice as a PDF document (A4): seller, customer, number, dates, lines, totals in the
 * currency's format, a status mark and the payment link. The document's dates are the
 * invoice's own, so rendering the same invoice twice gives the same text.
 */
export function renderInvoicePdf(invoice: Invoice, context: PdfContext): Promise<Uint8Array> {
  const issued = invoice.finalizedAt ?? invoice.createdAt;
  const document = new PDFDocument({
    size: 'A4',
    bufferPages: true,
    margin: 50,
    info: { Title: `Invoice ${invoice.number ?? invoice.id}`, Author: context.sellerName || 'Recur', CreationDate: issued },
  });
  const chunks: Buffer[] = [];
  document.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Uint8Array>((resolve, reject) => {
    document.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    document.on('error', reject);
  });
  document.registerFont('regular', REGULAR);
  document.registerFont('bold', BOLD);
  const format = (amount: Money) => formatMoney(amount);
  const left = 50;
  const right = document.page.width - 50;
  const width = right - left;

  // Header: seller and the document's identity.
  document.font('bold').fontSize(20).text(context.sellerName || 'Invoice', left, 50);
  document.font('regular').fontSize(10).fillColor('#555555').text('Invoice', left, 78);
  document.fillColor('#000000');
  const facts: [string, string][] = [
    ['Invoice number', invoice.number ?? 'Draft (no number yet)'],
    ['Date of issue', day(issued)],
    ['Date due', invoice.dueDate],
    ...(invoice.periodStart && invoice.periodEnd ? [['Billing period', `${day(invoice.periodStart)} to ${day(invoice.periodEnd)}`] as [string, string]] : []),
    ['Status', invoice.status],
  ];
  let y = 110;
  for (const [label, value] of facts) {
    document.font('bold').fontSize(10).text(label, left, y, { width: 120 });
    document.font('regular').text(value, left + 120, y, { width: 250 });
    y += 15;
  }
  document.font('bold').text('Bill to', left + 330, 110);
  document.font('regular').text(invoice.customer.name, left + 330, 125, { width: width - 330 });
  document.text(invoice.customer.email, left + 330, document.y, { width: width - 330 });
  if (invoice.description) {
    y += 10;
    document.font('regular').text(invoice.description, left, y, { width });
    y = document.y;
  }

  // Lines.
  y += 25;
  const columns = { description: left, quantity: left + 300, amount: left + 370 };
  const amountWidth = right - columns.amount;
  document.font('bold').fontSize(10);
  document.text('Description', columns.description, y, { width: 290 });
  document.text('Qty', columns.quantity, y, { width: 60, align: 'right' });
  document.text('Amount', columns.amount, y, { width: amountWidth, align: 'right' });
  y += 16;
  document.moveTo(left, y - 3).lineTo(right, y - 3).strokeColor('#999999').stroke();
  document.font('regular');
  for (const line of invoice.lines) {
    const description = line.periodStart && line.periodEnd ? `${line.description} (${day(line.periodStart)} to ${day(line.periodEnd)})` : line.description;
    document.text(description, columns.description, y, { width: 290 });
    const next = document.y;
    document.text(String(line.quantity), columns.quantity, y, { width: 60, align: 'right' });
    document.text(format(line.amount), columns.amount, y, { width: amountWidth, align: 'right' });
    y = Math.max(next, y + 14) + 4;
    if (y > document.page.height - 160) {
      document.addPage();
      y = 50;
    }
  }
  document.moveTo(left, y).lineTo(right, y).strokeColor('#999999').stroke();
  y += 8;

  // Totals.
  const totals: [string, string, boolean][] = [
    ['Subtotal', format(invoice.subtotal), false],
    ['Discount', invoice.discount.amountMinor === 0 ? format(invoice.discount) : `−${format(invoice.discount)}`, false],
    ['Total', format(invoice.total), true],
    ['Amount paid', format(invoice.amountPaid), false],
    ['Amount due', format(invoice.amountDue), true],
  ];
  for (const [label, value, strong] of totals) {
    document.font(strong ? 'bold' : 'regular').fontSize(10);
    document.text(label, columns.quantity - 100, y, { width: 160, align: 'right' });
    document.text(value, columns.amount, y, { width: amountWidth, align: 'right' });
    y += 16;
  }

  // How to pay: the hosted payment page, while there is something to pay.
  if (invoice.paymentUrl && (invoice.status === 'open' || invoice.status === 'failed')) {
    y += 14;
    document.font('bold').text('Pay online', left, y);
    document.font('regular').fillColor('#1a56db').text(invoice.paymentUrl, left, y + 15, { link: invoice.paymentUrl, underline: true, width });
    document.fillColor('#000000');
  }

  // The status mark is a stamp at the top right, upright so text extraction reads it whole.
  const mark = STATUS_MARKS[invoice.status];
  if (mark) {
    document.switchToPage(0);
    document.font('bold').fontSize(28).fillColor('#cc0000').fillOpacity(0.6);
    document.text(mark, left, 45, { width, align: 'right', lineBreak: false });
    document.fillColor('#000000').fillOpacity(1);
  }
  document.end();
  return done;
}
