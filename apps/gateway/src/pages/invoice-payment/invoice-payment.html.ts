import type { InvoiceJson } from '@recur/contracts';
import { formatMoney, money } from '@recur/money';
import { PAYMENT_PROVIDER_CODES, type PaymentProvider, PROVIDER_RULES, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { html, layout, type SafeHtml } from '../page-kit';

/** The hosted payment page of an invoice (`/pay/<payment token>`): what the customer sees and the form they pay with. */

export interface InvoicePaymentView {
  /** The page's own path, where its form posts. */
  action: string;
  csrf: string;
  sellerName: string;
  invoice: InvoiceJson;
  error?: string;
  /** What the customer typed, shown again after a refusal. */
  typed?: { provider: string; phoneNumber: string };
}

const amountDue = (invoice: InvoiceJson): string => formatMoney(money(invoice.amount_due, invoice.currency));

function summary(view: InvoicePaymentView): SafeHtml {
  const { invoice } = view;
  return html`${invoice.livemode ? '' : html`<p><span class="badge wait">Sandbox — no real money moves</span></p>`}
<h1>Invoice ${invoice.number} from ${view.sellerName}</h1>
<p class="muted">Amount due</p>
<p class="amount" data-testid="amount-due">${amountDue(invoice)}</p>
<table><tbody>
<tr><th scope="row">Invoice</th><td data-testid="invoice-number">${invoice.number}</td></tr>
<tr><th scope="row">From</th><td data-testid="seller">${view.sellerName}</td></tr>
<tr><th scope="row">Due</th><td data-testid="due-date">${invoice.due_date}</td></tr>
<tr><th scope="row">Status</th><td data-testid="invoice-status" data-status="${invoice.status}">${invoice.status}</td></tr>
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

/** An open or failed invoice: its summary and the form that starts a mobile-money payment. */
export function invoicePaymentPage(view: InvoicePaymentView): string {
  const typed = view.typed ?? { provider: '', phoneNumber: '' };
  return layout(`Pay invoice ${view.invoice.number} — ${view.sellerName}`, html`<div class="card narrow">
${summary(view)}
${view.invoice.status === 'failed' ? html`<p class="muted">The last payment attempt did not go through; you can try again.</p>` : ''}
${view.error ? html`<div class="error" role="alert" data-testid="payment-error">${view.error}</div>` : ''}
<form method="post" action="${view.action}">
<input type="hidden" name="csrf" value="${view.csrf}">
<label for="provider">Mobile-money provider</label>
<select id="provider" name="provider" data-testid="provider">
<option value="">Find it from my phone number</option>
${providersFor(view.invoice.currency).map((code) => html`<option value="${code}"${code === typed.provider ? html` selected` : ''}>${PROVIDER_RULES[code].displayName}</option>`)}
</select>
<label for="phone-number">Phone number, in international format</label>
<input id="phone-number" name="phone_number" type="text" inputmode="tel" autocomplete="tel" required maxlength="32" placeholder="+260971000001" value="${typed.phoneNumber}">
<p><button type="submit">Pay ${amountDue(view.invoice)}</button></p>
</form>
${view.invoice.livemode ? '' : html`<p class="muted">Sandbox test numbers: ${SANDBOX_MAGIC_NUMBERS.succeed} succeeds, ${SANDBOX_MAGIC_NUMBERS.fail} fails, ${SANDBOX_MAGIC_NUMBERS.pending} stays pending (the last six digits decide, whichever Zambian provider is picked or predicted).</p>`}
</div>`);
}

/** A paid (or refunded) invoice: nothing left to pay. */
export function invoicePaidPage(view: Pick<InvoicePaymentView, 'sellerName' | 'invoice'>): string {
  const refunded = view.invoice.status === 'refunded';
  return layout(`Invoice ${view.invoice.number} — ${view.sellerName}`, html`<div class="card narrow">
<div class="notice" role="status" data-testid="paid-notice">${refunded ? 'This invoice was paid and has been refunded.' : 'This invoice is paid — thank you.'}</div>
${summary({ ...view, action: '', csrf: '' })}
</div>`);
}

/** A voided invoice (answered 410): it will not be collected. */
export function invoiceVoidPage(view: Pick<InvoicePaymentView, 'sellerName' | 'invoice'>): string {
  return layout(`Invoice ${view.invoice.number} is no longer payable — ${view.sellerName}`, html`<div class="card narrow">
<h1>This invoice is no longer payable</h1>
<p>${view.sellerName} cancelled invoice ${view.invoice.number}; there is nothing to pay. Contact them if you think this is a mistake.</p>
</div>`);
}
