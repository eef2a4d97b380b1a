import { dirname, join } from 'node:path';
import { type Messages, messages } from '@recur/i18n';
import { formatPercentage, type Money, money, subtract, type TaxAmount } from '@recur/money';
import PDFDocument from 'pdfkit';
import SVGtoPDF from 'svg-to-pdfkit';
import { addressLines, type SellerProfile } from '../seller/seller-profile';
import { appliedBalance, type CustomerDetails, type Invoice } from './invoice';

/**
 * DejaVu Sans (shipped by the `dejavu-fonts-ttf` package) rather than the 14 standard PDF
 * fonts, which cover Western European text only: customer names and currency signs (₹, ₦, ₴)
 * in other scripts print as written. pdfkit embeds only the glyphs used.
 */
const FONT_DIR = join(dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const REGULAR = join(FONT_DIR, 'DejaVuSans.ttf');
const BOLD = join(FONT_DIR, 'DejaVuSans-Bold.ttf');

/** The big mark across a document that must not be paid as it stands (its catalogue key). */
const STATUS_MARKS: Partial<Record<Invoice['status'], string>> = { draft: 'document.mark.draft', paid: 'document.mark.paid', void: 'document.mark.void', refunded: 'document.mark.refunded' };

/** A tax amount's name on the PDF: `VAT 16%`, `TVA 18 % incluse`; the percentage's decimal sign is the language's. */
export const taxLabel = (words: Messages, tax: TaxAmount): string =>
  words.t(tax.taxRate.inclusive ? 'invoice.tax_label_inclusive' : 'invoice.tax_label', {
    name: tax.taxRate.displayName,
    percentage: new Intl.NumberFormat(words.locale, { maximumFractionDigits: 4 }).format(Number(formatPercentage(tax.taxRate.ratePpm))),
  });

/** The wording an untaxed invoice of an exempt or reverse-charge customer carries (docs/api/invoices.md#tax-and-rounding), as catalogue keys. */
const TAX_STATUS_FACTS: Partial<Record<Invoice['customerTaxExempt'], string>> = {
  exempt: 'invoice.tax_exempt',
  reverse: 'invoice.reverse_charge',
};

export interface PdfContext {
  /** The account's name: the seller when its profile has no legal name. */
  sellerName: string;
  /** The seller's legal details and branding (`/v1/account`), printed in the header and footer. */
  seller?: SellerProfile;
  /** The language the document is written in (docs/localization.md#which-language); absent: English. */
  locale?: string;
}

/** The seller as a document prints it: the legal name, else the account's name. */
export const sellerNameOf = (context: PdfContext): string => context.seller?.legalName || context.sellerName;

/** Where the logo may draw, at most (points). */
const LOGO_BOX: [number, number] = [140, 48];

/** What a billing document (an invoice, a credit note) prints, in its own words. */
export interface PdfDocumentContent {
  /** `Invoice`, `Credit note`: the title under the seller and in the document's metadata. */
  title: string;
  /** The document's number as its title reads it (`INV-000001`, `CN-000001`, or the draft's id). */
  reference: string;
  issued: Date;
  /** Label and value rows at the top left (number, dates, status…). */
  facts: [string, string][];
  /** The Bill to block: name and e-mail, and the details recorded at finalization (null on drafts). */
  customer: { name: string; email: string; details: CustomerDetails | null };
  description: string | null;
  lines: { description: string; quantity: number; amount: Money }[];
  /** Label, value, bold. */
  totals: [string, string, boolean][];
  /** The hosted payment page, printed while there is something to pay. */
  payLink: string | null;
  /** The big stamp at the top right (`PAID`, `CREDIT NOTE`…), if any. */
  mark: string | undefined;
}

/**
 * The invoice as a PDF document (A4): seller, customer, number, dates, lines, totals in the
 * currency's format, a status mark and the payment link. The document's dates are the
 * invoice's own, so rendering the same invoice twice gives the same text.
 */
export function renderInvoicePdf(invoice: Invoice, context: PdfContext): Promise<Uint8Array> {
  const words = messages(context.locale ?? '');
  const issued = invoice.finalizedAt ?? invoice.createdAt;
  const format = (amount: Money) => words.money(amount);
  const taxStatus = TAX_STATUS_FACTS[invoice.customerTaxExempt];
  const mark = STATUS_MARKS[invoice.status];
  return renderDocumentPdf({
    title: words.t('document.invoice'),
    reference: invoice.number ?? invoice.id,
    issued,
    facts: [
      [words.t('invoice.number'), invoice.number ?? words.t('invoice.draft_number')],
      [words.t('invoice.date_of_issue'), words.date(issued)],
      [words.t('invoice.date_due'), words.date(invoice.dueDate)],
      ...(invoice.periodStart && invoice.periodEnd
        ? [[words.t('invoice.billing_period'), words.t('invoice.period', { start: words.date(invoice.periodStart), end: words.date(invoice.periodEnd) })] as [string, string]]
        : []),
      [words.t('invoice.status'), words.t(`invoice.status.${invoice.status}`)],
      ...(taxStatus ? [[words.t('invoice.tax'), words.t(taxStatus)] as [string, string]] : []),
    ],
    customer: { ...invoice.customer, details: invoice.customerDetails },
    description: invoice.description,
    lines: invoice.lines.map((line) => ({
      description: line.periodStart && line.periodEnd
        ? words.t('invoice.line_period', { description: line.description, start: words.date(line.periodStart), end: words.date(line.periodEnd) })
        : line.description,
      quantity: line.quantity,
      amount: line.amount,
    })).map((line, index) => ({ ...line, description: [line.description, ...invoice.lines[index].taxAmounts.map((tax) => words.t('invoice.line_tax', { tax: taxLabel(words, tax), amount: format(tax.amount) }))].join('\n') })),
    totals: [
      [words.t('invoice.subtotal'), format(invoice.subtotal), false],
      [words.t('invoice.discount'), invoice.discount.amountMinor === 0 ? format(invoice.discount) : `−${format(invoice.discount)}`, false],
      ...(invoice.totalTaxAmounts.length === 0 ? [] : [[words.t('invoice.total_excluding_tax'), format(subtract(invoice.total, invoice.tax)), false] as [string, string, boolean]]),
      ...invoice.totalTaxAmounts.map((tax): [string, string, boolean] => [words.t('invoice.tax_on', { tax: taxLabel(words, tax), taxable: format(tax.taxableAmount) }), format(tax.amount), false]),
      [words.t('invoice.total'), format(invoice.total), true],
      ...(appliedBalance(invoice) <= 0 ? [] : [[words.t('invoice.applied_balance'), `−${format(money(appliedBalance(invoice), invoice.currency))}`, false] as [string, string, boolean]]),
      // A negative final invoice's total went to the customer's balance (docs/api/customer-balance.md#negative-invoices).
      ...(appliedBalance(invoice) >= 0 ? [] : [[words.t('invoice.credited_to_balance'), format(money(-appliedBalance(invoice), invoice.currency)), false] as [string, string, boolean]]),
      [words.t('invoice.amount_paid'), format(invoice.amountPaid), false],
      [words.t('invoice.amount_due'), format(invoice.amountDue), true],
    ],
    payLink: invoice.paymentUrl && (invoice.status === 'open' || invoice.status === 'failed') ? invoice.paymentUrl : null,
    mark: mark ? words.t(mark) : undefined,
  }, context);
}

/**
 * The Bill to block under the customer's name: address lines (the country in the document's
 * language), phone, e-mail, then each tax id with its type's label (docs/api/invoices.md#customer-details).
 */
export function billToLines(words: Messages, customer: PdfDocumentContent['customer']): string[] {
  const details = customer.details;
  const address = details?.address;
  const country = address?.country ? new Intl.DisplayNames([words.locale], { type: 'region' }).of(address.country) ?? address.country : null;
  return [
    ...(address ? [address.line1, address.line2, [address.postalCode, address.city].filter(Boolean).join(' '), address.region, country] : []),
    details?.phone && words.t('document.bill_to.phone', { phone: details.phone }),
    customer.email,
    ...(details?.taxIds ?? []).map(({ type, value }) => words.t('document.bill_to.tax_id', { label: words.t(`tax_id.${type}`), value })),
  ].filter((line): line is string => Boolean(line));
}

/** Lays out one billing document (the one PDF layout of invoices and credit notes). */
export function renderDocumentPdf(content: PdfDocumentContent, context: PdfContext): Promise<Uint8Array> {
  const words = messages(context.locale ?? '');
  const document = new PDFDocument({
    size: 'A4',
    bufferPages: true,
    margin: 50,
    info: { Title: `${content.title} ${content.reference}`, Author: sellerNameOf(context) || 'Recur', CreationDate: content.issued },
  });
  const chunks: Buffer[] = [];
  document.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Uint8Array>((resolve, reject) => {
    document.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    document.on('error', reject);
  });
  document.registerFont('regular', REGULAR);
  document.registerFont('bold', BOLD);
  const left = 50;
  const right = document.page.width - 50;
  const width = right - left;

  // Header: the seller (logo, name, legal details) and the document's identity.
  const seller = context.seller;
  const brand = seller?.brandColor || '#000000';
  let y = 50;
  if (seller?.logo) {
    drawLogo(document, seller.logo, left, 45);
    y = 45 + LOGO_BOX[1] + 8;
  }
  // The seller's name on one line: a long legal name is set smaller rather than broken.
  const name = sellerNameOf(context) || content.title;
  document.font('bold').fontSize(20);
  const nameSize = Math.max(11, Math.min(20, Math.floor((20 * 330) / document.widthOfString(name))));
  document.fontSize(nameSize).fillColor(brand).text(name, left, y, { width: 330, lineBreak: nameSize > 11 ? false : true });
  y = document.y + 2;
  const details = seller
    ? [
      ...addressLines(seller.address),
      seller.taxId && words.t('document.seller.tax_id', { tax_id: seller.taxId }),
      seller.registrationNumber && words.t('document.seller.registration_number', { registration_number: seller.registrationNumber }),
    ].filter(Boolean)
    : [];
  document.font('regular').fontSize(9).fillColor('#555555');
  for (const detail of details) {
    document.text(detail, left, y, { width: 330 });
    y = document.y;
  }
  document.fontSize(10).fillColor(brand).text(content.title, left, y + 4);
  document.fillColor('#000000');
  y = Math.max(110, document.y + 14);
  const top = y;
  for (const [label, value] of content.facts) {
    document.font('bold').fontSize(10).text(label, left, y, { width: 120 });
    document.font('regular').text(value, left + 120, y, { width: 250 });
    y += 15;
  }
  document.font('bold').text(words.t('document.bill_to'), left + 330, top);
  document.font('regular').text(content.customer.name, left + 330, top + 15, { width: width - 330 });
  for (const line of billToLines(words, content.customer)) document.text(line, left + 330, document.y, { width: width - 330 });
  // A long Bill to block pushes the lines down rather than running into them.
  y = Math.max(y, document.y);
  if (content.description) {
    y += 10;
    document.font('regular').text(content.description, left, y, { width });
    y = document.y;
  }

  // Lines.
  y += 25;
  const columns = { description: left, quantity: left + 300, amount: left + 370 };
  const amountWidth = right - columns.amount;
  document.font('bold').fontSize(10);
  document.text(words.t('document.column.description'), columns.description, y, { width: 290 });
  document.text(words.t('document.column.quantity'), columns.quantity, y, { width: 60, align: 'right' });
  document.text(words.t('document.column.amount'), columns.amount, y, { width: amountWidth, align: 'right' });
  y += 16;
  document.moveTo(left, y - 3).lineTo(right, y - 3).strokeColor('#999999').stroke();
  document.font('regular');
  for (const line of content.lines) {
    document.text(line.description, columns.description, y, { width: 290 });
    const next = document.y;
    document.text(new Intl.NumberFormat(words.locale).format(line.quantity), columns.quantity, y, { width: 60, align: 'right' });
    document.text(words.money(line.amount), columns.amount, y, { width: amountWidth, align: 'right' });
    y = Math.max(next, y + 14) + 4;
    if (y > document.page.height - 160) {
      document.addPage();
      y = 50;
    }
  }
  document.moveTo(left, y).lineTo(right, y).strokeColor('#999999').stroke();
  y += 8;

  // Totals.
  // A label may take two lines (French words are longer): the next row starts below it.
  const labelLeft = columns.description + 80;
  for (const [label, value, strong] of content.totals) {
    document.font(strong ? 'bold' : 'regular').fontSize(10);
    document.text(label, labelLeft, y, { width: columns.amount - 10 - labelLeft, align: 'right' });
    const below = document.y;
    document.text(value, columns.amount, y, { width: amountWidth, align: 'right' });
    y = Math.max(y + 16, below + 4);
  }

  // How to pay: the hosted payment page, while there is something to pay.
  if (content.payLink) {
    y += 14;
    document.font('bold').text(words.t('document.pay_online'), left, y);
    document.font('regular').fillColor('#1a56db').text(content.payLink, left, y + 15, { link: content.payLink, underline: true, width });
    document.fillColor('#000000');
    y += 30;
  }

  // The seller's footer (terms, bank details) and how to reach them.
  const contact = seller ? [seller.supportEmail, seller.supportPhone].filter(Boolean).join(words.t('document.contact_separator')) : '';
  if (seller?.invoiceFooter || contact) {
    y += 24;
    document.moveTo(left, y).lineTo(right, y).strokeColor('#dddddd').stroke();
    document.font('regular').fontSize(9).fillColor('#555555');
    if (seller?.invoiceFooter) document.text(seller.invoiceFooter, left, y + 8, { width });
    if (contact) document.text(words.t('document.contact', { contact }), left, seller?.invoiceFooter ? document.y + 4 : y + 8, { width });
    document.fillColor('#000000');
  }

  // The status mark is a stamp at the top right, upright so text extraction reads it whole.
  if (content.mark) {
    document.switchToPage(0);
    document.font('bold').fontSize(28).fillColor('#cc0000').fillOpacity(0.6);
    document.text(content.mark, left, 45, { width, align: 'right', lineBreak: false });
    document.fillColor('#000000').fillOpacity(1);
  }
  document.end();
  return done;
}

/** The seller's logo, scaled into LOGO_BOX: a PNG as an image, an SVG drawn as vectors. */
function drawLogo(document: PDFKit.PDFDocument, logo: NonNullable<SellerProfile['logo']>, x: number, y: number): void {
  if (logo.contentType === 'image/png') {
    document.image(Buffer.from(logo.bytes), x, y, { fit: LOGO_BOX });
    return;
  }
  SVGtoPDF(document, Buffer.from(logo.bytes).toString('utf8'), x, y, { width: LOGO_BOX[0], height: LOGO_BOX[1], preserveAspectRatio: 'xMinYMin meet' });
}
