import { type Messages } from '@recur/i18n';
import { money } from '@recur/money';
import { providerDisplayName, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { html, layout, type SafeHtml } from './page-kit';

/**
 * The HTML of Recur's payer pages: the sandbox payer page (the simulator's stand-in for a
 * provider's page), the return page and their error pages, on page-kit's layout like every
 * other page, in the customer's language (docs/localization.md#which-language). They hold no
 * key, only the page token that is in their own URL.
 */

/** What a page shows of a payment (from PaymentsService.GetPayerPage). */
export interface PagePayment {
  id: string;
  status: string;
  amountMinor: number;
  currency: string;
  invoiceNumber: string;
  phoneNumber: string;
  provider: string;
  failureCode: string;
  livemode: boolean;
}

/** What the sandbox payer page says Approve does for its number (PayerPage.expected_outcome). */
const OUTCOMES = new Set(['succeed', 'fail', 'pending', 'no_answer', 'not_found']);
const STATUSES = new Set(['succeeded', 'failed', 'canceled', 'pending']);

/** `ZMW 150.00`, `150,00 ZMW`: the amount as the page's language writes it. */
const formatAmount = (payment: PagePayment, w: Messages): string => w.money(money(payment.amountMinor, payment.currency));

const sandboxBadge = (text: string) => html`<p><span class="badge wait">${text}</span></p>`;

function details(payment: PagePayment, w: Messages): SafeHtml {
  return html`<table><tbody>
<tr><th scope="row">${w.t('payer.invoice')}</th><td data-testid="invoice-number">${payment.invoiceNumber}</td></tr>
<tr><th scope="row">${w.t('payer.phone_number')}</th><td data-testid="phone-number">${payment.phoneNumber}</td></tr>
<tr><th scope="row">${w.t('payer.provider')}</th><td data-testid="provider" data-provider="${payment.provider}">${providerDisplayName(payment.provider)}</td></tr>
</tbody></table>`;
}

/** The payment's state as a notice: green when received, red when failed, amber while pending. */
function statusNotice(payment: PagePayment, w: Messages): SafeHtml {
  const tone = payment.status === 'succeeded' ? 'notice' : payment.status === 'failed' || payment.status === 'canceled' ? 'error' : 'waiting';
  return html`<div class="${tone}" role="status" data-testid="payment-status" data-status="${payment.status}">${STATUSES.has(payment.status) ? w.t(`payer.status.${payment.status}`) : payment.status}</div>`;
}

/** The sandbox payer page: amount, invoice, number, Approve and Decline (a form post with a CSRF token). */
export function sandboxPayerPage(payment: PagePayment, token: string, csrf: string, expectedOutcome: string, w: Messages): string {
  const settled = payment.status !== 'pending';
  return layout(w.t('payer.title', { amount: formatAmount(payment, w) }), html`<div class="card narrow">
${sandboxBadge(w.t('page.sandbox_badge'))}
<h1>${w.t('payer.heading')}</h1>
<p class="amount" data-testid="amount">${formatAmount(payment, w)}</p>
${details(payment, w)}
${settled ? statusNotice(payment, w) : html`<form method="post" action="/sandbox/pay/${token}" class="row actions">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" name="decision" value="approve">${w.t('payer.approve')}</button>
<button type="submit" name="decision" value="decline" class="secondary">${w.t('payer.decline')}</button>
</form>`}
<p class="muted">${OUTCOMES.has(expectedOutcome) ? w.t(`payer.outcome.${expectedOutcome}`) : ''} ${w.t('payer.test_numbers', { ...SANDBOX_MAGIC_NUMBERS })}</p>
</div>`, { lang: w.locale });
}

/** Where the payer lands after the provider's (or the sandbox's) page; refreshes itself while pending. */
export function returnPage(payment: PagePayment, w: Messages): string {
  const pending = payment.status === 'pending';
  return layout(w.t('payer.return_title', { number: payment.invoiceNumber }), html`<div class="card narrow">
${payment.livemode ? '' : sandboxBadge(w.t('payer.sandbox'))}
<h1>${w.t('payer.return_heading', { number: payment.invoiceNumber })}</h1>
<p class="amount">${formatAmount(payment, w)}</p>
${statusNotice(payment, w)}
${payment.status === 'failed' || payment.status === 'canceled' ? html`<p class="muted">${w.t('payer.reason', { code: payment.failureCode })}</p>` : ''}
${details(payment, w)}
</div>`, { lang: w.locale, ...(pending ? { head: html`<meta http-equiv="refresh" content="2">` } : {}) });
}

export function notFoundPage(w: Messages): string {
  return layout(w.t('payer.not_found_title'), html`<div class="card narrow"><h1>${w.t('payer.not_found_heading')}</h1><p>${w.t('payer.not_found_body')}</p></div>`, { lang: w.locale });
}

export function errorPage(message: string, w: Messages): string {
  return layout(w.t('payer.error_title'), html`<div class="card narrow"><h1>${w.t('payer.error_heading')}</h1><p>${message}</p></div>`, { lang: w.locale });
}
