import { DomainError } from '@recur/kernel';
import { money } from '@recur/money';
import { thrownBy } from '@recur/testing';
import type { Invoice } from '../src/invoices/invoice';
import { assertSendable, composeInvoiceMail, sendKeyOf } from '../src/mail/invoice-mail';
import { MAIL_SCHEDULE } from '../src/mail/mail-schedule';
import { DEFAULT_MAIL_FROM, invoicingConfigFromEnv } from '../src/invoicing-config';

const usd = (amount: number) => money(amount, 'usd');
const invoice = (changes: Partial<Invoice> = {}): Invoice => ({
  id: 'in_1', tenant: { accountId: 'acct_1', livemode: false }, number: 'INV-000042', status: 'open',
  customer: { id: 'cus_1', name: 'Ada Lovelace', email: 'ada@example.com' }, subscriptionId: null, billingReason: 'manual', collectionMethod: 'send_invoice', currency: 'usd',
  description: null, lines: [], subtotal: usd(12_345), discount: usd(0), tax: usd(0), totalTaxAmounts: [], customerTaxExempt: 'none', total: usd(12_345), amountDue: usd(12_345), amountPaid: usd(0), amountRefunded: usd(0), amountCredited: usd(0), creditRefundInvoiceId: null, startingBalance: usd(0), endingBalance: usd(0), customerDetails: null,
  dueDate: '2026-12-10', periodStart: null, periodEnd: null, paymentUrl: 'https://pay.example.test/pay_token_1', paymentToken: 'pay_token_1', metadata: {},
  createdAt: new Date(0), updatedAt: new Date(0), finalizedAt: new Date(0), paidAt: null, voidedAt: null, paymentAttemptCount: 0, paymentRetryAt: [], ...changes,
});

describe('invoice e-mail', () => {
  it('words the invoice mail with the amount due, the due date and the payment link', () => {
    const mail = composeInvoiceMail(invoice(), { kind: 'invoice', reminderNumber: null }, 'Acme Studio');
    expect(mail.subject).toBe('Invoice INV-000042 from Acme Studio');
    for (const expected of ['Hello Ada Lovelace,', '$123.45', '2026-12-10', 'https://pay.example.test/pay_token_1', 'INV-000042.pdf']) expect([expected, mail.text.includes(expected)]).toEqual([expected, true]);
    expect(composeInvoiceMail(invoice(), { kind: 'invoice', reminderNumber: null }, '').subject).toBe('Invoice INV-000042');
  });

  it('words a dunning reminder with its number', () => {
    const mail = composeInvoiceMail(invoice({ status: 'failed' }), { kind: 'reminder', reminderNumber: 2 }, 'Acme Studio');
    expect(mail.subject).toBe('Reminder 2: invoice INV-000042 from Acme Studio is due');
    expect(mail.text).toContain('reminder 2');
    expect(mail.text).toContain('https://pay.example.test/pay_token_1');
    expect(sendKeyOf({ kind: 'reminder', reminderNumber: 2, sellerName: '' })).toBe('reminder:2');
    expect(sendKeyOf({ kind: 'invoice', sendKey: 'resend:req_1', sellerName: '' })).toBe('resend:req_1');
  });

  it("words the mail in the customer's language: a French reminder, a French paid invoice (docs/localization.md)", () => {
    const reminder = composeInvoiceMail(invoice({ status: 'failed' }), { kind: 'reminder', reminderNumber: 2 }, 'Acme Studio', undefined, 'fr');
    expect(reminder.subject).toBe('Relance 2 : la facture INV-000042 de Acme Studio est échue');
    expect(reminder.text).toBe([
      'Bonjour Ada Lovelace,', '',
      "Ceci est la relance 2 concernant la facture INV-000042 de Acme Studio : 123,45\u00a0$US était dû le 10 décembre 2026 et n'est pas encore payé.", '',
      'Payez-la en ligne :', 'https://pay.example.test/pay_token_1', '',
      'La facture est jointe au format PDF (INV-000042.pdf).', '',
    ].join('\n'));
    const paid = composeInvoiceMail(invoice({ status: 'paid', amountDue: usd(0), amountPaid: usd(12_345) }), { kind: 'invoice', reminderNumber: null }, '', undefined, 'fr');
    expect(paid.subject).toBe('Facture INV-000042');
    expect(paid.text).toContain("Voici la facture INV-000042 d'un montant de 123,45\u00a0$US ; elle est payée, rien n'est dû.");
  });

  it('leaves the payment link out once nothing is due', () => {
    const mail = composeInvoiceMail(invoice({ status: 'paid', amountDue: usd(0), amountPaid: usd(12_345) }), { kind: 'invoice', reminderNumber: null }, 'Acme Studio');
    expect(mail.text).toContain('it is paid, nothing is due');
    expect(mail.text).not.toContain('pay.example.test');
  });

  it('sends finalized invoices that are not void; a draft or a void invoice is refused with its code', () => {
    for (const status of ['open', 'failed', 'paid', 'refunded'] as const) expect(() => assertSendable(invoice({ status }))).not.toThrow();
    expect(thrownBy<DomainError>(() => assertSendable(invoice({ status: 'draft', number: null })))).toMatchObject({ kind: 'failed_precondition', code: 'invoice_not_finalized' });
    expect(thrownBy<DomainError>(() => assertSendable(invoice({ status: 'void' })))).toMatchObject({ kind: 'failed_precondition', code: 'invoice_void' });
  });

  it('tries a mail twelve times over about a day', () => {
    expect(MAIL_SCHEDULE.maxAttempts).toBe(12);
    expect(MAIL_SCHEDULE.delaysMs.slice(0, 3)).toEqual([1_000, 5_000, 30_000]);
    const total = MAIL_SCHEDULE.delaysMs.reduce((sum, delay) => sum + delay, 0);
    expect([total > 20 * 3_600_000, total < 30 * 3_600_000]).toEqual([true, true]);
  });
});

describe('invoicing configuration', () => {
  const base = { SUBSCRIPTION_GRPC_ADDR: '127.0.0.1:1', SMTP_URL: 'smtp://user:secret@mail.example.com:587' };

  it('requires an smtp:// or smtps:// SMTP_URL', () => {
    expect(() => invoicingConfigFromEnv({ SUBSCRIPTION_GRPC_ADDR: '127.0.0.1:1' })).toThrow('SMTP_URL');
    expect(() => invoicingConfigFromEnv({ ...base, SMTP_URL: 'https://mail.example.com' })).toThrow('SMTP_URL');
    expect(invoicingConfigFromEnv({ ...base, SMTP_URL: 'smtps://mail.example.com:465' }).smtpUrl).toBe('smtps://mail.example.com:465');
  });

  it('mails at finalization unless INVOICE_MAIL_ON_FINALIZE=false, from MAIL_FROM', () => {
    expect(invoicingConfigFromEnv(base)).toMatchObject({ mailOnFinalize: true, mailFrom: DEFAULT_MAIL_FROM });
    expect(invoicingConfigFromEnv({ ...base, INVOICE_MAIL_ON_FINALIZE: 'false', MAIL_FROM: 'Acme <billing@acme.example>' })).toMatchObject({ mailOnFinalize: false, mailFrom: 'Acme <billing@acme.example>' });
  });
});
