import { formatMoney, money } from '@recur/money';
import { providerDisplayName, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { html, layout, type SafeHtml } from './page-kit';

/**
 * The HTML of Recur's payer pages: the sandbox payer page (the simulator's stand-in for a
 * provider's page) and the return page, on page-kit's layout like every other page. They
 * hold no key, only the page token that is in their own URL.
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

/** `K 150.00`, `$29.00`: the amount in its currency's format (@recur/money formatMoney). */
export const formatAmount = (payment: PagePayment): string => formatMoney(money(payment.amountMinor, payment.currency));

const sandboxBadge = (text: string) => html`<p><span class="badge wait">${text}</span></p>`;

function details(payment: PagePayment): SafeHtml {
  return html`<table><tbody>
<tr><th scope="row">Invoice</th><td data-testid="invoice-number">${payment.invoiceNumber}</td></tr>
<tr><th scope="row">Phone number</th><td data-testid="phone-number">${payment.phoneNumber}</td></tr>
<tr><th scope="row">Provider</th><td data-testid="provider" data-provider="${payment.provider}">${providerDisplayName(payment.provider)}</td></tr>
</tbody></table>`;
}

const OUTCOME_NOTE: Record<string, string> = {
  succeed: 'Approve will succeed for this number.',
  fail: 'Approve will fail for this number (insufficient funds).',
  pending: 'Approve will leave this payment pending for this number.',
  no_answer: 'Approve will fail for this number (the payer did not answer the prompt).',
  not_found: 'Approve will fail for this number (no such mobile-money wallet).',
};

const STATUS_TEXT: Record<string, string> = {
  succeeded: 'Payment received — thank you.',
  failed: 'The payment did not go through.',
  canceled: 'This payment was canceled: the invoice no longer needs paying.',
  pending: 'Waiting for the payment to be confirmed…',
};

/** The payment's state as a notice: green when received, red when failed, amber while pending. */
function statusNotice(payment: PagePayment): SafeHtml {
  const tone = payment.status === 'succeeded' ? 'notice' : payment.status === 'failed' || payment.status === 'canceled' ? 'error' : 'waiting';
  return html`<div class="${tone}" role="status" data-testid="payment-status" data-status="${payment.status}">${STATUS_TEXT[payment.status] ?? payment.status}</div>`;
}

/** The sandbox payer page: amount, invoice, number, Approve and Decline (a form post with a CSRF token). */
export function sandboxPayerPage(payment: PagePayment, token: string, csrf: string, expectedOutcome: string): string {
  const settled = payment.status !== 'pending';
  return layout(`Pay ${formatAmount(payment)} — Recur sandbox`, html`<div class="card narrow">
${sandboxBadge('Sandbox — no real money moves')}
<h1>Approve this payment</h1>
<p class="amount" data-testid="amount">${formatAmount(payment)}</p>
${details(payment)}
${settled ? statusNotice(payment) : html`<form method="post" action="/sandbox/pay/${token}" class="row actions">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="decline" class="secondary">Decline</button>
</form>`}
<p class="muted">${OUTCOME_NOTE[expectedOutcome] ?? ''} Test numbers: ${SANDBOX_MAGIC_NUMBERS.succeed} succeeds,
${SANDBOX_MAGIC_NUMBERS.fail} fails, ${SANDBOX_MAGIC_NUMBERS.pending} stays pending; Decline always fails.</p>
</div>`);
}

/** Where the payer lands after the provider's (or the sandbox's) page; refreshes itself while pending. */
export function returnPage(payment: PagePayment): string {
  const pending = payment.status === 'pending';
  return layout(`Payment ${payment.status} — Recur`, html`<div class="card narrow">
${payment.livemode ? '' : sandboxBadge('Sandbox')}
<h1>Invoice ${payment.invoiceNumber}</h1>
<p class="amount">${formatAmount(payment)}</p>
${statusNotice(payment)}
${payment.status === 'failed' || payment.status === 'canceled' ? html`<p class="muted">Reason: ${payment.failureCode}</p>` : ''}
${details(payment)}
</div>`, pending ? { head: html`<meta http-equiv="refresh" content="2">` } : {});
}

export function notFoundPage(): string {
  return layout('Payment page not found — Recur', html`<div class="card narrow"><h1>This payment page does not exist.</h1><p>Check the link you were given.</p></div>`);
}

export function errorPage(message: string): string {
  return layout('Something went wrong — Recur', html`<div class="card narrow"><h1>Something went wrong.</h1><p>${message}</p></div>`);
}
