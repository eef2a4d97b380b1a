import type { Messages } from '@recur/i18n';
import { money } from '@recur/money';
import { PAYMENT_PROVIDER_CODES, PROVIDER_RULES, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { saveMethodBox } from '../invoice-payment/invoice-payment.html';
import { html, layout } from '../page-kit';
import { brandStyle, type PageSeller, sellerBlock, sellerContact } from '../page-seller';

/** What the hosted checkout page shows of a link: its offer, priced by the subscription service. */
export interface CheckoutView {
  action: string;
  csrf: string;
  /** The form's one-time token: a double submit makes one sale. */
  checkoutToken: string;
  title: string;
  planName: string;
  amountMinor: number;
  currency: string;
  interval: string;
  /** A `one_time` link: one payment, no interval. */
  oneTime: boolean;
  trialDays: number;
  allowPromotionCodes: boolean;
  livemode: boolean;
  /** The seller's legal details, logo, brand colour and support contact (docs/api/account.md). */
  seller: PageSeller;
  /** The words of the account's default_locale. */
  words: Messages;
  error?: string;
  typed?: Partial<Record<'name' | 'email' | 'phone_number' | 'provider' | 'promotion_code' | 'save_method', string>>;
}

/** The checkout in the account's language (its default_locale: the buyer is not a customer yet; docs/localization.md). */
export function checkoutPage(view: CheckoutView): string {
  const w = view.words;
  const typed = view.typed ?? {};
  const price = w.money(money(view.amountMinor, view.currency));
  const provider = typed.provider ?? 'MTN_MOMO_ZMB';
  const per = `checkout.per.${view.interval}`;
  return layout(w.t('checkout.title', { title: view.title }), html`
<div class="card narrow">
${view.livemode ? '' : html`<p><span class="badge wait">${w.t('page.sandbox_badge')}</span></p>`}
${sellerBlock(view.seller, w)}
<h1>${view.title}</h1>
<p><strong data-testid="plan-name">${view.planName}</strong></p>
<p><span data-testid="price" style="font-size:1.6rem;font-weight:700">${price}</span> <span data-testid="interval">${view.oneTime ? w.t('checkout.one_time') : w.has(per) ? w.t(per) : view.interval}</span></p>
${view.trialDays > 0 ? html`<p data-testid="trial">${w.t('checkout.trial', { days: view.trialDays })}</p>` : ''}
${view.error ? html`<div class="error" role="alert" data-testid="checkout-error">${view.error}</div>` : ''}
<form method="post" action="${view.action}">
  <input type="hidden" name="csrf" value="${view.csrf}">
  <input type="hidden" name="checkout_token" value="${view.checkoutToken}">
  <label for="name">${w.t('checkout.name')}</label>
  <input type="text" id="name" name="name" required maxlength="200" autocomplete="name" value="${typed.name ?? ''}">
  <label for="email">${w.t('checkout.email')}</label>
  <input type="email" id="email" name="email" required maxlength="254" autocomplete="email" value="${typed.email ?? ''}">
  <label for="phone_number">${w.t('checkout.phone')}</label>
  <input type="text" id="phone_number" name="phone_number" required maxlength="32" autocomplete="tel" inputmode="tel" placeholder="+260971234567" value="${typed.phone_number ?? ''}" aria-describedby="phone-help">
  <p class="muted" id="phone-help">${view.livemode ? w.t('checkout.phone_help') : w.t('checkout.phone_help_sandbox', { number: SANDBOX_MAGIC_NUMBERS.succeed })}</p>
  <label for="provider">${w.t('checkout.provider')}</label>
  <select id="provider" name="provider">${PAYMENT_PROVIDER_CODES.map((code) => html`<option value="${code}"${code === provider ? html` selected` : ''}>${PROVIDER_RULES[code].displayName}</option>`)}</select>
  ${view.trialDays > 0 ? '' : saveMethodBox(w, typed.save_method === 'yes')}
  ${view.allowPromotionCodes ? html`<label for="promotion_code">${w.t('checkout.promotion_code')}</label>
  <input type="text" id="promotion_code" name="promotion_code" maxlength="50" autocomplete="off" value="${typed.promotion_code ?? ''}">` : ''}
  <p><button type="submit">${view.trialDays > 0 ? w.t('checkout.start_trial') : w.t('checkout.pay', { amount: price })}</button></p>
</form>
${sellerContact(view.seller, w)}
</div>`, { lang: w.locale, head: brandStyle(view.seller) });
}

export function checkoutMessagePage(words: Messages, text: { title: string; message: string }): string {
  const { title, message } = text;
  return layout(title, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p></div>`, { lang: words.locale });
}
