import type { CustomerJson, InvoiceJson, SubscriptionJson } from '@recur/contracts';
import type { Messages } from '@recur/i18n';
import { money } from '@recur/money';
import { checkTaxId, isCountryCode, TAX_ID_TYPES } from '@recur/vocabulary';
import { html, layout, type SafeHtml } from '../page-kit';
import { type PageProblem, problemText } from '../page-locale';
import { brandStyle, type PageSeller, sellerBlock, sellerContact } from '../page-seller';

/** The customer portal's pages: what one customer sees through a signed link. */

export interface CustomerPortalView {
  base: string;
  csrf: string;
  sellerName: string;
  /** The seller's legal details, logo, brand colour and support contact (docs/api/account.md). */
  seller: PageSeller;
  customer: CustomerJson;
  subscriptions: SubscriptionJson[];
  invoices: InvoiceJson[];
  allowsCancellation: boolean;
  expiresAt: number;
  /** The words of the customer's language. */
  words: Messages;
  /** A catalogue key (`portal.notice.details_saved`). */
  notice?: string;
  error?: string;
  /** A refusal in the customer's words (a catalogue key: `portal.error.country`). */
  errorKey?: string;
  /** The values the customer typed, shown again after a refusal. */
  typed?: { name: string; email: string };
  typedBilling?: BillingForm;
}

/** The billing form as posted: the address's parts and one tax id (type `''`: none). */
export interface BillingForm {
  line1: string;
  line2: string;
  postal_code: string;
  city: string;
  region: string;
  country: string;
  tax_id_type: string;
  tax_id_value: string;
}

const ADDRESS_PARTS = ['line1', 'line2', 'postal_code', 'city', 'region'] as const;
const ADDRESS_PART_MAX = 200;

/**
 * The billing form checked by the API's own rules (an ISO country code, 200 characters a part,
 * the tax id's rule from @recur/vocabulary), refusing with a catalogue key; an all-empty address
 * is none (null), an empty tax id type none.
 */
export function checkBillingForm(form: BillingForm):
  | { address: { line1: string; line2: string; city: string; region: string; postalCode: string; country: string } | null; taxId: { type: string; value: string } | null }
  | { problem: string } {
  if (ADDRESS_PARTS.some((part) => form[part].trim().length > ADDRESS_PART_MAX)) return { problem: 'portal.error.address_too_long' };
  const country = form.country.trim().toUpperCase();
  if (country !== '' && !isCountryCode(country)) return { problem: 'portal.error.country' };
  const address = { line1: form.line1.trim(), line2: form.line2.trim(), city: form.city.trim(), region: form.region.trim(), postalCode: form.postal_code.trim(), country };
  let taxId: { type: string; value: string } | null = null;
  if (form.tax_id_type !== '' || form.tax_id_value.trim() !== '') {
    const check = checkTaxId(form.tax_id_type, form.tax_id_value);
    if (!check.ok) return { problem: `portal.error.tax_id.${check.reason}` };
    taxId = { type: check.type, value: check.value };
  }
  return { address: Object.values(address).every((part) => part === '') ? null : address, taxId };
}

/** A tax id type as the form lists it: its label and, for a national one, the country in the customer's language (`NINEA — Sénégal`). */
function taxIdTypeLabel(words: Messages, type: string): string {
  const label = words.t(`tax_id.${type}`);
  if (type === 'eu_vat') return label;
  const country = new Intl.DisplayNames([words.locale], { type: 'region' }).of(type.slice(0, 2).toUpperCase());
  return `${label} — ${country}`;
}

function billingCard(view: CustomerPortalView): SafeHtml {
  const w = view.words;
  const address = view.customer.address;
  const first = view.customer.tax_ids[0];
  const typed: BillingForm = view.typedBilling ?? {
    line1: address?.line1 ?? '', line2: address?.line2 ?? '', postal_code: address?.postal_code ?? '', city: address?.city ?? '',
    region: address?.region ?? '', country: address?.country ?? '', tax_id_type: first?.type ?? '', tax_id_value: first?.value ?? '',
  };
  const input = (name: keyof BillingForm, autocomplete: string, max: number) =>
    html`<label for="billing-${name}">${w.t(name.startsWith('tax_id') ? 'portal.tax_id.value' : `portal.address.${name}`)}</label><input id="billing-${name}" name="${name}" type="text" autocomplete="${autocomplete}" maxlength="${String(max)}" value="${typed[name]}">`;
  return html`<div class="card"><h2>${w.t('portal.billing')}</h2><p class="muted">${w.t('portal.billing_help')}</p>
<form method="post" action="${view.base}/billing">${csrfField(view.csrf)}
${input('line1', 'address-line1', 200)}${input('line2', 'address-line2', 200)}${input('postal_code', 'postal-code', 200)}${input('city', 'address-level2', 200)}${input('region', 'address-level1', 200)}
<label for="billing-country">${w.t('portal.address.country')}</label><input id="billing-country" name="country" type="text" autocomplete="country" maxlength="2" value="${typed.country}">
<label for="billing-tax_id_type">${w.t('portal.tax_id.type')}</label><select id="billing-tax_id_type" name="tax_id_type">
<option value=""${typed.tax_id_type === '' ? ' selected' : ''}>${w.t('portal.tax_id.none')}</option>
${TAX_ID_TYPES.map((type) => html`<option value="${type}"${typed.tax_id_type === type ? ' selected' : ''}>${taxIdTypeLabel(w, type)}</option>`)}</select>
${input('tax_id_value', 'off', 64)}
<p><button type="submit">${w.t('portal.save_billing')}</button></p></form></div>`;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;
const CANCELLABLE = new Set(['trialing', 'active', 'past_due']);
const PAYABLE = new Set(['open', 'failed']);

/** A status in the customer's words when the catalogue has it (`subscription.status.past_due`), else as the API writes it. */
function statusBadge(words: Messages, kind: 'subscription' | 'invoice', status: string): SafeHtml {
  const tone = ['active', 'trialing', 'paid'].includes(status) ? 'ok' : ['failed', 'past_due', 'open'].includes(status) ? 'wait' : '';
  const key = `${kind}.status.${status}`;
  return html`<span class="badge ${tone}" data-status="${status}">${words.has(key) ? words.t(key) : status.replace('_', ' ')}</span>`;
}

const moment = (words: Messages, seconds: number | null | undefined): string => (seconds ? words.dateTime(new Date(seconds * 1000)) : '—');

function subscriptionRow(view: CustomerPortalView, subscription: SubscriptionJson): SafeHtml {
  const w = view.words;
  const ends = subscription.cancel_at_period_end;
  const canCancel = view.allowsCancellation && CANCELLABLE.has(subscription.status) && !ends;
  const interval = `billing_interval.${subscription.billing_interval}`;
  return html`<tr data-subscription-id="${subscription.id}"><td>${subscription.price.plan_name}</td><td>${statusBadge(w, 'subscription', subscription.status)}</td>
<td>${w.has(interval) ? w.t(interval) : subscription.billing_interval}${subscription.quantity > 1 ? ` × ${subscription.quantity}` : ''}</td>
<td>${w.t(ends ? 'portal.ends' : 'portal.renews', { time: moment(w, subscription.current_period_end) })}</td>
<td>${canCancel
    ? html`<form method="post" action="${view.base}/subscriptions/${subscription.id}/cancel">${csrfField(view.csrf)}<button type="submit" class="secondary" aria-label="${w.t('portal.cancel_label', { plan: subscription.price.plan_name })}">${w.t('portal.cancel')}</button></form>`
    : ''}</td></tr>`;
}

function invoiceRow(view: CustomerPortalView, invoice: InvoiceJson): SafeHtml {
  const w = view.words;
  const payable = PAYABLE.has(invoice.status) && invoice.payment_url;
  const label = invoice.number ?? invoice.id;
  const due = w.money(money(invoice.amount_due, invoice.currency));
  return html`<tr data-invoice-id="${invoice.id}"><td>${label}</td><td>${statusBadge(w, 'invoice', invoice.status)}</td>
<td>${w.money(money(invoice.total, invoice.currency))}</td><td>${invoice.due_date ? w.date(invoice.due_date) : ''}</td>
<td><a href="${view.base}/invoices/${invoice.id}/pdf" aria-label="${w.t('portal.pdf_label', { invoice: label })}">PDF</a>
${payable ? html` · <a href="${invoice.payment_url}" aria-label="${w.t('portal.pay_label', { amount: due, invoice: label })}">${w.t('portal.pay', { amount: due })}</a>` : ''}</td></tr>`;
}

/** The portal in the customer's language: their preferred_locale, else the account's (docs/localization.md). */
export function customerPortalPage(view: CustomerPortalView): string {
  const w = view.words;
  const typed = view.typed ?? { name: view.customer.name, email: view.customer.email };
  const title = w.t('portal.title', { seller: view.sellerName });
  return layout(title, html`
${sellerBlock(view.seller, w)}
<h1>${title}</h1>
${view.customer.livemode ? '' : html`<p><span class="badge wait">${w.t('portal.sandbox')}</span></p>`}
${view.notice ? html`<div class="notice" role="status">${w.t(view.notice)}</div>` : ''}
${view.error ? html`<div class="error" role="alert">${view.error}</div>` : ''}
${view.errorKey ? html`<div class="error" role="alert">${w.t(view.errorKey)}</div>` : ''}
<div class="card"><h2>${w.t('portal.details')}</h2>
<form method="post" action="${view.base}/details">${csrfField(view.csrf)}
<label for="customer-name">${w.t('portal.name')}</label><input id="customer-name" name="name" type="text" autocomplete="name" required maxlength="256" value="${typed.name}">
<label for="customer-email">${w.t('portal.email')}</label><input id="customer-email" name="email" type="email" autocomplete="email" required maxlength="320" value="${typed.email}">
<p><button type="submit">${w.t('portal.save_details')}</button></p></form></div>
${billingCard(view)}
<div class="card"><h2>${w.t('portal.subscriptions')}</h2>
${view.subscriptions.length === 0 ? html`<p>${w.t('portal.no_subscriptions')}</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">${w.t('portal.column.plan')}</th><th scope="col">${w.t('portal.column.status')}</th><th scope="col">${w.t('portal.column.billing')}</th><th scope="col">${w.t('portal.column.period')}</th><th scope="col">${w.t('portal.column.actions')}</th></tr></thead>
<tbody>${view.subscriptions.map((subscription) => subscriptionRow(view, subscription))}</tbody></table></div>`}
</div>
<div class="card"><h2>${w.t('portal.invoices')}</h2>
${view.invoices.length === 0 ? html`<p>${w.t('portal.no_invoices')}</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">${w.t('portal.column.invoice')}</th><th scope="col">${w.t('portal.column.status')}</th><th scope="col">${w.t('portal.column.total')}</th><th scope="col">${w.t('portal.column.due')}</th><th scope="col">${w.t('portal.column.documents')}</th></tr></thead>
<tbody>${view.invoices.map((invoice) => invoiceRow(view, invoice))}</tbody></table></div>`}
</div>
<p class="muted">${w.t('portal.expires', { time: moment(w, view.expiresAt), seller: view.sellerName })}</p>
${sellerContact(view.seller, w)}`, { lang: w.locale, head: brandStyle(view.seller) });
}

export function linkProblemPage(words: Messages, problem: PageProblem, detail?: string): string {
  const { title, message } = problemText(words, problem, detail);
  return layout(`${title} — Recur`, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p></div>`, { lang: words.locale });
}
