import { formatMoney, money } from '@recur/money';
import { PAYMENT_PROVIDER_CODES, PROVIDER_RULES, SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { html, layout } from '../page-kit';

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
  error?: string;
  typed?: Partial<Record<'name' | 'email' | 'phone_number' | 'provider' | 'promotion_code', string>>;
}

const INTERVAL_TEXT: Record<string, string> = { monthly: 'per month', quarterly: 'per quarter', yearly: 'per year' };

export function checkoutPage(view: CheckoutView): string {
  const typed = view.typed ?? {};
  const price = formatMoney(money(view.amountMinor, view.currency));
  const provider = typed.provider ?? 'MTN_MOMO_ZMB';
  return layout(`${view.title} — checkout`, html`
<div class="card narrow">
${view.livemode ? '' : html`<p><span class="badge wait">Sandbox — no real money moves</span></p>`}
<h1>${view.title}</h1>
<p><strong data-testid="plan-name">${view.planName}</strong></p>
<p><span data-testid="price" style="font-size:1.6rem;font-weight:700">${price}</span> <span data-testid="interval">${view.oneTime ? 'one-time payment' : INTERVAL_TEXT[view.interval] ?? view.interval}</span></p>
${view.trialDays > 0 ? html`<p data-testid="trial">Starts with a ${view.trialDays}-day free trial: nothing to pay today.</p>` : ''}
${view.error ? html`<div class="error" role="alert" data-testid="checkout-error">${view.error}</div>` : ''}
<form method="post" action="${view.action}">
  <input type="hidden" name="csrf" value="${view.csrf}">
  <input type="hidden" name="checkout_token" value="${view.checkoutToken}">
  <label for="name">Name</label>
  <input type="text" id="name" name="name" required maxlength="200" autocomplete="name" value="${typed.name ?? ''}">
  <label for="email">E-mail</label>
  <input type="email" id="email" name="email" required maxlength="254" autocomplete="email" value="${typed.email ?? ''}">
  <label for="phone_number">Mobile money number</label>
  <input type="text" id="phone_number" name="phone_number" required maxlength="32" autocomplete="tel" inputmode="tel" placeholder="+260971234567" value="${typed.phone_number ?? ''}" aria-describedby="phone-help">
  <p class="muted" id="phone-help">International format, with the country code.${view.livemode ? '' : ` Sandbox: ${SANDBOX_MAGIC_NUMBERS.succeed} pays.`}</p>
  <label for="provider">Mobile money provider</label>
  <select id="provider" name="provider">${PAYMENT_PROVIDER_CODES.map((code) => html`<option value="${code}"${code === provider ? html` selected` : ''}>${PROVIDER_RULES[code].displayName}</option>`)}</select>
  ${view.allowPromotionCodes ? html`<label for="promotion_code">Promotion code (optional)</label>
  <input type="text" id="promotion_code" name="promotion_code" maxlength="50" autocomplete="off" value="${typed.promotion_code ?? ''}">` : ''}
  <p><button type="submit">${view.trialDays > 0 ? 'Start the trial' : `Pay ${price}`}</button></p>
</form>
</div>`);
}

export function checkoutMessagePage(title: string, message: string): string {
  return layout(title, html`<div class="card narrow"><h1>${title}</h1><p>${message}</p></div>`);
}
