import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogue } from '@recur/i18n';
import { money } from '@recur/money';
import type { CreditNote } from '../src/credit-notes/credit-note';
import type { CustomerDetails } from '../src/invoices/invoice';
import { renderCreditNotePdf } from '../src/credit-notes/credit-note-pdf';

const note: CreditNote = {
  id: 'cn_1', tenant: { accountId: 'acct_1', livemode: false }, number: 'CN-000003', invoiceId: 'in_1', invoiceNumber: 'INV-000042',
  customer: { id: 'cus_1', name: 'Awa Ndiaye', email: 'awa@example.com' }, amount: money(29_500, 'xof'), reason: 'requested_by_customer',
  paymentId: 'pay_1', creditedTo: 'refund', memo: null, metadata: {}, createdAt: new Date('2026-12-05T10:00:00Z'), taxAmounts: [],
};

/** The invoice's customer details as its finalization recorded them. */
const billTo: CustomerDetails = {
  address: { line1: '12 rue Carnot', line2: null, city: 'Dakar', region: null, postalCode: '10200', country: 'SN' },
  phone: '+221771234567',
  taxIds: [{ type: 'sn_ninea', value: '0012345 2G3' }],
};

/** The PDF's text as poppler's pdftotext reads it, French spacing (U+00A0, U+202F) as plain spaces. */
function pdfText(pdf: Uint8Array): string {
  const file = join(mkdtempSync(join(tmpdir(), 'recur-cn-')), 'credit-note.pdf');
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }).replace(/[\u00a0\u202f]/g, ' ');
}

describe('credit note PDF languages (docs/localization.md)', () => {
  it('writes a French credit note in French: title, facts, reason, refund line, amount, stamp, no raw key', async () => {
    const text = pdfText(await renderCreditNotePdf(note, { sellerName: 'Teranga', locale: 'fr' }, billTo));
    for (const expected of ['12 rue Carnot', '10200 Dakar', 'Sénégal', 'Tél. : +221771234567', 'NINEA : 0012345 2G3', 'Avoir', "Numéro d'avoir", 'CN-000003', "Date d'émission", '5 décembre 2026', 'Motif', 'À la demande du client',
      'Remboursement de la facture INV-000042', 'Total crédité', '29 500 F CFA', 'AVOIR', 'Facturé à']) {
      expect([expected, text.includes(expected)]).toEqual([expected, true]);
    }
    expect(text).not.toMatch(/Credit note|Refund of|Total credited/);
    expect(Object.keys(catalogue('en')!).filter((key) => text.includes(key))).toEqual([]);
  });

  it('keeps English for en (and for no locale): ISO dates, English amounts', async () => {
    for (const locale of ['en', undefined]) {
      const text = pdfText(await renderCreditNotePdf(note, { sellerName: 'Teranga', locale }, null));
      for (const expected of ['Credit note number', '2026-12-05', 'Requested by the customer', 'Refund of invoice INV-000042', 'Total credited', 'F CFA 29,500', 'CREDIT NOTE']) {
        expect([expected, text.includes(expected)]).toEqual([expected, true]);
      }
    }
  });

  it('prints a credit that moved no money as a credit on the invoice, with its reason and memo, in English and French (docs/api/credit-notes.md)', async () => {
    const credit: CreditNote = { ...note, paymentId: '', creditedTo: 'customer_balance', reason: 'product_unsatisfactory', memo: 'Goodwill for the outage of 3 December' };
    const english = pdfText(await renderCreditNotePdf(credit, { sellerName: 'Teranga', locale: 'en' }, null));
    for (const expected of ['Product unsatisfactory', 'Credit on invoice INV-000042', 'Memo', 'Goodwill for the outage of 3 December', 'F CFA 29,500']) {
      expect([expected, english.includes(expected)]).toEqual([expected, true]);
    }
    expect(english).not.toMatch(/Refund of/);
    const french = pdfText(await renderCreditNotePdf({ ...credit, reason: 'order_change' }, { sellerName: 'Teranga', locale: 'fr' }, null));
    for (const expected of ['Modification de commande', 'Avoir sur la facture INV-000042', 'Note', '29 500 F CFA']) {
      expect([expected, french.includes(expected)]).toEqual([expected, true]);
    }
    expect(Object.keys(catalogue('en')!).filter((key) => french.includes(key))).toEqual([]);
  });
});
