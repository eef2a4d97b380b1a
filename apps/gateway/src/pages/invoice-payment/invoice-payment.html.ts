import type { InvoiceJson } from '@recur/contracts';
import type { Messages } from '@recur/i18n';
import { money } from '@recur/money';
import { PAYMENT_PROVIDER_CODES, type PaymentProvider, PROVIDER_RULES, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { html, layout, type SafeHtml } from '../page-kit';
import { brandStyle, type PageSeller, sellerBlock, sellerContact } from '../page-seller';

/** The hosted payment page of an invoice (`/pay/<payment token>`): what the customer sees and the form they pay with, in the customer's language (docs/localization.md). */

export interface InvoicePaymentView {
  /** The page's own path, where its form posts. */
  action: string;
  csrf: string;
  sellerName: string;
  /** The seller's legal details, logo, brand colour and support contact (docs/api/account.md). */
  seller: PageSeller;
  invoice: InvoiceJson;
  /** The words of the customer's language (their preferred_locale, else the account's). */
  words: Messages;
  error?: string;
  /** What the customer typed, shown again after a refusal. */
  typed?: { provider: string; phoneNumber: string; saveMethod?: boolean };
}

const amountDue = (view: Pick<InvoicePaymentView, 'invoice' | 'words'>): string => view.words.money(money(view.invoice.amount_due, view.invoice.currency));

function summary(view: Pick<InvoicePaymentView, 'invoice' | 'words' | 'sellerName' | 'seller'>): SafeHtml {
  const { invoice, words: w } = view;
  const names = { number: invoice.number ?? '', seller: view.sellerName };
  return html`${invoice.livemode ? '' : html`<p><span class="badge wait">${w.t('page.sandbox_badge')}</span></p>`}
${sellerBlock(view.seller, w)}
<h1>${w.t('page.invoice.heading', names)}</h1>
<p class="muted">${w.t('page.invoice.amount_due')}</p>
<p class="amount" data-testid="amount-due">${amountDue(view)}</p>
<table><tbody>
<tr><th scope="row">${w.t('page.invoice.invoice')}</th><td data-testid="invoice-number">${invoice.number}</td></tr>
<tr><th scope="row">${w.t('page.invoice.from')}</th><td data-testid="seller">${view.sellerName}</td></tr>
<tr><th scope="row">${w.t('page.invoice.due')}</th><td data-testid="due-date" data-date="${invoice.due_date}">${invoice.due_date ? w.date(invoice.due_date) : ''}</td></tr>
<tr><th scope="row">${w.t('page.invoice.status')}</th><td data-testid="invoice-status" data-status="${invoice.status}">${w.t(`invoice.status.${invoice.status}`)}</td></tr>
</tbody></table>`;
}

/**
 * The providers the payer may pick, by the names payers know them: those whose documented rules
 * take the invoice's currency (all of them when none does: the payment's refusal then says why).
 */
function providersFor(currency: string): PaymentProvider[] {
  const taking = PAYMENT_PROVIDER_CODES.filter((code) => PROVIDER_RULES[code].currencies.some((rule) => rule.currency === currency.toUpperCase()));
  return taking.length > 0 ? taking : PAYMENT_PROVIDER_CODES;
}

const pageNames = (view: Pick<InvoicePaymentView, 'invoice' | 'sellerName'>) => ({ number: view.invoice.number ?? '', seller: view.sellerName });

/** An open or failed invoice: its summary and the form that starts a mobile-money payment. */
export function invoicePaymentPage(view: InvoicePaymentView): string {
  const typed = view.typed ?? { provider: '', phoneNumber: '' };
  const w = view.words;
  return layout(w.t('page.invoice.pay_title', pageNames(view)), html`<div class="card narrow">
${summary(view)}
${view.invoice.status === 'failed' ? html`<p class="muted">${w.t('page.invoice.last_attempt_failed')}</p>` : ''}
${view.error ? html`<div class="error" role="alert" data-testid="payment-error">${view.error}</div>` : ''}
<form method="post" action="${view.action}">
<input type="hidden" name="csrf" value="${view.csrf}">
<label for="provider">${w.t('page.invoice.provider')}</label>
<select id="provider" name="provider" data-testid="provider">
<option value="">${w.t('page.invoice.provider_from_number')}</option>
${providersFor(view.invoice.currency).map((code) => html`<option value="${code}"${code === typed.provider ? html` selected` : ''}>${PROVIDER_RULES[code].displayName}</option>`)}
</select>
<label for="phone-number">${w.t('page.invoice.phone_number')}</label>
<input id="phone-number" name="phone_number" type="text" inputmode="tel" autocomplete="tel" required maxlength="32" placeholder="+260971000001" value="${typed.phoneNumber}">
${saveMethodBox(w, typed.saveMethod === true)}
<p><button type="submit">${w.t('page.invoice.pay', { amount: amountDue(view) })}</button></p>
</form>
${view.invoice.livemode ? '' : html`<p class="muted">${w.t('page.invoice.sandbox_numbers', { ...SANDBOX_MAGIC_NUMBERS })}</p>`}
${sellerContact(view.seller, w)}
</div>`, { lang: w.locale, head: brandStyle(view.seller) });
}

/**
 * The payer's consent to keep the number for automatic collection (docs/api/payment-methods.md#saved-from-the-pages):
 * never ticked by default; the number is saved only if the payment succeeds.
 */
export function saveMethodBox(w: Messages, checked: boolean): SafeHtml {
  return html`<div class="checks consent"><label for="save-method"><input type="checkbox" id="save-method" name="save_method" value="yes" aria-describedby="save-method-help"${checked ? html` checked` : ''}> ${w.t('page.save_method')}</label></div>
<p class="muted" id="save-method-help">${w.t('page.save_method_help')}</p>`;
}

/** A paid (or refunded) invoice: nothing left to pay. */
export function invoicePaidPage(view: Pick<InvoicePaymentView, 'sellerName' | 'seller' | 'invoice' | 'words'>): string {
  const refunded = view.invoice.status === 'refunded';
  const w = view.words;
  return layout(w.t('page.invoice.title', pageNames(view)), html`<div class="card narrow">
<div class="notice" role="status" data-testid="paid-notice">${w.t(refunded ? 'page.invoice.refunded' : 'page.invoice.paid')}</div>
${summary(view)}
${sellerContact(view.seller, w)}
</div>`, { lang: w.locale, head: brandStyle(view.seller) });
}

/** A voided invoice (answered 410): it will not be collected. */
export function invoiceVoidPage(view: Pick<InvoicePaymentView, 'sellerName' | 'seller' | 'invoice' | 'words'>): string {
  const w = view.words;
  return layout(w.t('page.invoice.void_title', pageNames(view)), html`<div class="card narrow">
${sellerBlock(view.seller, w)}
<h1>${w.t('page.invoice.void_heading')}</h1>
<p>${w.t('page.invoice.void_body', pageNames(view))}</p>
${sellerContact(view.seller, w)}
</div>`, { lang: w.locale, head: brandStyle(view.seller) });
}
