import { formatMoney, money } from '@recur/money';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { escapeHtml } from './page-kit';

/**
 * The HTML of Recur's payer pages: the sandbox payer page (the simulator's stand-in for a
 * provider's page) and the return page. Every interpolated value is escaped; the pages load
 * nothing from elsewhere and hold no key, only the page token that is in their own URL.
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

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f5f6f8; color: #1b1f24; margin: 0; }
  main { max-width: 26rem; margin: 3rem auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  .badge { display: inline-block; background: #fff3cd; color: #7a5b00; border-radius: 6px; padding: .15rem .5rem; font-size: .8rem; font-weight: 600; }
  .amount { font-size: 2.2rem; font-weight: 700; margin: .5rem 0 1rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: .4rem 1rem; margin: 0 0 1.5rem; }
  dt { color: #5f6b7a; } dd { margin: 0; font-variant-numeric: tabular-nums; }
  form { display: flex; gap: .75rem; }
  button { flex: 1; font-size: 1rem; padding: .75rem; border-radius: 8px; border: 0; cursor: pointer; }
  button.approve { background: #1a7f37; color: #fff; } button.decline { background: #e5e7eb; color: #1b1f24; }
  .note { color: #5f6b7a; font-size: .85rem; margin-top: 1.5rem; }
  .status { font-size: 1.4rem; font-weight: 700; }
  .succeeded { color: #1a7f37; } .failed { color: #b42318; } .pending { color: #7a5b00; }`;

function layout(title: string, body: string, extraHead = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">${extraHead}
<link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

function details(payment: PagePayment): string {
  return `<dl>
  <dt>Invoice</dt><dd data-testid="invoice-number">${escapeHtml(payment.invoiceNumber)}</dd>
  <dt>Phone number</dt><dd data-testid="phone-number">${escapeHtml(payment.phoneNumber)}</dd>
  <dt>Provider</dt><dd>${escapeHtml(payment.provider)}</dd>
</dl>`;
}

const OUTCOME_NOTE: Record<string, string> = {
  succeed: 'Approve will succeed for this number.',
  fail: 'Approve will fail for this number (insufficient funds).',
  pending: 'Approve will leave this payment pending for this number.',
};

/** The sandbox payer page: amount, invoice, number, Approve and Decline (a form post with a CSRF token). */
export function sandboxPayerPage(payment: PagePayment, token: string, csrf: string, expectedOutcome: string): string {
  const settled = payment.status !== 'pending';
  const form = settled
    ? `<p class="status ${escapeHtml(payment.status)}">This payment is ${escapeHtml(payment.status)}.</p>`
    : `<form method="post" action="/sandbox/pay/${escapeHtml(token)}">
  <input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
  <button class="approve" type="submit" name="decision" value="approve">Approve</button>
  <button class="decline" type="submit" name="decision" value="decline">Decline</button>
</form>`;
  return layout(`Pay ${formatAmount(payment)} — Recur sandbox`, `
<span class="badge">Sandbox — no real money moves</span>
<h1>Approve this payment</h1>
<div class="amount" data-testid="amount">${escapeHtml(formatAmount(payment))}</div>
${details(payment)}
${form}
<p class="note">${escapeHtml(OUTCOME_NOTE[expectedOutcome] ?? '')} Test numbers: ${escapeHtml(SANDBOX_MAGIC_NUMBERS.succeed)} succeeds,
${escapeHtml(SANDBOX_MAGIC_NUMBERS.fail)} fails, ${escapeHtml(SANDBOX_MAGIC_NUMBERS.pending)} stays pending; Decline always fails.</p>`);
}

const STATUS_TEXT: Record<string, string> = {
  succeeded: 'Payment received — thank you.',
  failed: 'The payment did not go through.',
  pending: 'Waiting for the payment to be confirmed…',
};

/** Where the payer lands after the provider's (or the sandbox's) page; refreshes itself while pending. */
export function returnPage(payment: PagePayment): string {
  const pending = payment.status === 'pending';
  return layout(`Payment ${payment.status} — Recur`, `
${payment.livemode ? '' : '<span class="badge">Sandbox</span>'}
<h1>Invoice ${escapeHtml(payment.invoiceNumber)}</h1>
<div class="amount">${escapeHtml(formatAmount(payment))}</div>
<p class="status ${escapeHtml(payment.status)}" data-testid="payment-status" data-status="${escapeHtml(payment.status)}">${escapeHtml(STATUS_TEXT[payment.status] ?? payment.status)}</p>
${payment.status === 'failed' ? `<p class="note">Reason: ${escapeHtml(payment.failureCode)}</p>` : ''}
${details(payment)}`, pending ? '<meta http-equiv="refresh" content="2">' : '');
}

export function notFoundPage(): string {
  return layout('Payment page not found — Recur', '<h1>This payment page does not exist.</h1><p class="note">Check the link you were given.</p>');
}

export function errorPage(message: string): string {
  return layout('Something went wrong — Recur', `<h1>Something went wrong.</h1><p class="note">${escapeHtml(message)}</p>`);
}
