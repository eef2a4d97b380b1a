import type { CustomerJson, InvoiceJson, SubscriptionJson } from '@recur/contracts';
import { formatMoney, money } from '@recur/money';
import { formatTime, html, layout, type SafeHtml } from '../page-kit';

/** The customer portal's pages: what one customer sees through a signed link. */

export interface CustomerPortalView {
  base: string;
  csrf: string;
  sellerName: string;
  customer: CustomerJson;
  subscriptions: SubscriptionJson[];
  invoices: InvoiceJson[];
  allowsCancellation: boolean;
  expiresAt: number;
  notice?: string;
  error?: string;
  /** The values the customer typed, shown again after a refusal. */
  typed?: { name: string; email: string };
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;
const CANCELLABLE = new Set(['trialing', 'active', 'past_due']);
const PAYABLE = new Set(['open', 'failed']);

function statusBadge(status: string): SafeHtml {
  const tone = ['active', 'trialing', 'paid'].includes(status) ? 'ok' : ['failed', 'past_due', 'open'].includes(status) ? 'wait' : '';
  return html`<span class="badge ${tone}">${status.replace('_', ' ')}</span>`;
}

function subscriptionRow(view: CustomerPortalView, subscription: SubscriptionJson): SafeHtml {
  const ends = subscription.cancel_at_period_end;
  const canCancel = view.allowsCancellation && CANCELLABLE.has(subscription.status) && !ends;
  return html`<tr data-subscription-id="${subscription.id}"><td>${subscription.price.plan_name}</td><td>${statusBadge(subscription.status)}</td>
<td>${subscription.billing_interval}${subscription.quantity > 1 ? ` × ${subscription.quantity}` : ''}</td>
<td>${ends ? `Ends ${formatTime(subscription.current_period_end)}` : `Renews ${formatTime(subscription.current_period_end)}`}</td>
<td>${canCancel
    ? html`<form method="post" action="${view.base}/subscriptions/${subscription.id}/cancel">${csrfField(view.csrf)}<button type="submit" class="secondary" aria-label="Cancel at period end: ${subscription.price.plan_name}">Cancel at period end</button></form>`
    : ''}</td></tr>`;
}

function invoiceRow(view: CustomerPortalView, invoice: InvoiceJson): SafeHtml {
  const payable = PAYABLE.has(invoice.status) && invoice.payment_url;
  const label = invoice.number ?? invoice.id;
  return html`<tr data-invoice-id="${invoice.id}"><td>${label}</td><td>${statusBadge(invoice.status)}</td>
<td>${formatMoney(money(invoice.total, invoice.currency))}</td><td>${invoice.due_date}</td>
<td><a href="${view.base}/invoices/${invoice.id}/pdf" aria-label="Download invoice ${label} as PDF">PDF</a>
${payable ? html` · <a href="${invoice.payment_url}" aria-label="Pay ${formatMoney(money(invoice.amount_due, invoice.currency))} for invoice ${label}">Pay ${formatMoney(money(invoice.amount_due, invoice.currency))}</a>` : ''}</td></tr>`;
}

export function customerPortalPage(view: CustomerPortalView): string {
  const typed = view.typed ?? { name: view.customer.name, email: view.customer.email };
  return layout(`Your account with ${view.sellerName}`, html`
<h1>Your account with ${view.sellerName}</h1>
${view.customer.livemode ? '' : html`<p><span class="badge wait">Sandbox</span></p>`}
${view.notice ? html`<div class="notice" role="status">${view.notice}</div>` : ''}
${view.error ? html`<div class="error" role="alert">${view.error}</div>` : ''}
<div class="card"><h2>Your details</h2>
<form method="post" action="${view.base}/details">${csrfField(view.csrf)}
<label for="customer-name">Name</label><input id="customer-name" name="name" type="text" autocomplete="name" required maxlength="256" value="${typed.name}">
<label for="customer-email">E-mail</label><input id="customer-email" name="email" type="email" autocomplete="email" required maxlength="320" value="${typed.email}">
<p><button type="submit">Save details</button></p></form></div>
<div class="card"><h2>Subscriptions</h2>
${view.subscriptions.length === 0 ? html`<p>No subscriptions.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Billing</th><th scope="col">Period</th><th scope="col">Actions</th></tr></thead>
<tbody>${view.subscriptions.map((subscription) => subscriptionRow(view, subscription))}</tbody></table></div>`}
</div>
<div class="card"><h2>Invoices</h2>
${view.invoices.length === 0 ? html`<p>No invoices.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Invoice</th><th scope="col">Status</th><th scope="col">Total</th><th scope="col">Due</th><th scope="col">Documents</th></tr></thead>
<tbody>${view.invoices.map((invoice) => invoiceRow(view, invoice))}</tbody></table></div>`}
</div>
<p class="muted">This page's link works until ${formatTime(view.expiresAt)}; after that, ask ${view.sellerName} for a new one.</p>`);
}

export function linkProblemPage(title: string, message: string): string {
  return layout(`${title} — Recur`, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p></div>`);
}
