import { DEFAULT_LOCALE, type Messages, messages, resolveLocale } from '@recur/i18n';
import { accountDefaultLocale, type PageProblem, problemText } from '../page-locale';
import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { fromGrpcError, moneyFromMessage, type salesLinkV1 } from '@recur/contracts';
import type { JsonLogger } from '@recur/telemetry';
import { CUSTOMER_EMAIL_MAX, CUSTOMER_NAME_MAX, EMAIL_PATTERN, PAYMENT_PROVIDER_CODES } from '@recur/vocabulary';
import { IsIn, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { AccountsService } from '../../accounts/accounts.service';
import { apiErrorOf } from '../../http/api-exception.filter';
import { createValidationPipe } from '../../http/validation';
import { ServiceClients } from '../../infrastructure/service-clients';
import { clearCookie, cookieValue, field, formOf, isHttps, randomToken, sameOrigin, sendPage, setCookie, tokensMatch } from '../page-kit';
import { initiateFromPage } from '../page-payments';
import { pageSeller } from '../page-seller';
import { PAGES_LOGGER } from '../pages-logger';
import { checkoutMessagePage, checkoutPage, type CheckoutView } from './checkout.html';

const CSRF_COOKIE = 'recur_checkout_csrf';
const BASE = '/buy';

/** The buyer's form, checked as the API checks the same fields (the services check them again). */
export class CheckoutFormDto {
  @IsString({ message: 'name must be a string' }) @IsNotEmpty({ message: 'Enter your name.' }) @MaxLength(CUSTOMER_NAME_MAX)
  name!: string;

  @IsString({ message: 'email must be a string' }) @IsNotEmpty({ message: 'Enter your e-mail address.' }) @MaxLength(CUSTOMER_EMAIL_MAX)
  @Matches(EMAIL_PATTERN, { message: 'Enter a valid e-mail address.' })
  email!: string;

  @IsString() @IsNotEmpty({ message: 'Enter your mobile money number.' }) @MaxLength(32)
  phone_number!: string;

  @IsIn(PAYMENT_PROVIDER_CODES, { message: 'Choose a mobile money provider.' })
  provider!: string;

  @IsOptional() @IsString() @MaxLength(50)
  promotion_code?: string;
}

type Typed = NonNullable<CheckoutView['typed']>;

/**
 * The hosted checkout page of a sales link (`/buy/<token>`, the link's public `url`). The token
 * — 32 random bytes made with the link — is the only credential; the page holds no key. GET
 * shows the offer (priced by the subscription service) and a form; POST, guarded by a
 * double-submit CSRF cookie and the Origin check, makes the sale once per form (its hidden
 * `checkout_token`), starts paying its invoice (a plan sale's first, a one_time sale's one-off) and forwards the buyer to the payment's
 * redirectUrl (the sandbox payer page for sandbox links); once paid, the return page sends
 * them on to the link's success URL. A trial sale goes there at once. An inactive link answers 410.
 */
@Controller('buy')
export class CheckoutController {
  private readonly validation = createValidationPipe();

  constructor(
    private readonly services: ServiceClients,
    private readonly accounts: AccountsService,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
  ) {}

  @Get(':token')
  async show(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const offer = await this.offer(token, request, response);
    if (offer) await this.render(request, response, token, offer, 200, { checkoutToken: randomToken() });
  }

  @Post(':token')
  async submit(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const offer = await this.offer(token, request, response);
    if (!offer) return;
    const form = formOf(request);
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, CSRF_COOKIE), form.csrf)) {
      return sendPage(response, 403, problemPage(await this.words(offer), 'form_expired'));
    }
    const typed: Typed = {
      name: field(form, 'name').trim(),
      email: field(form, 'email').trim(),
      phone_number: field(form, 'phone_number').trim(),
      provider: field(form, 'provider'),
      promotion_code: field(form, 'promotion_code').trim(),
      save_method: field(form, 'save_method') === 'yes' ? 'yes' : '',
    };
    const checkoutToken = field(form, 'checkout_token');
    let body: CheckoutFormDto;
    try {
      const { save_method: _consent, ...fields } = typed;
      body = (await this.validation.transform(fields, { type: 'body', metatype: CheckoutFormDto })) as CheckoutFormDto;
    } catch (error) {
      return this.render(request, response, token, offer, 400, { checkoutToken, typed, error: apiErrorOf(error, request.raw).message });
    }
    let sale: salesLinkV1.CheckOutSalesLinkResponse;
    try {
      sale = await this.services.subscription.checkOutSalesLink({
        token, checkoutToken, name: body.name, email: body.email, promotionCode: offer.salesLink!.allowPromotionCodes ? body.promotion_code ?? '' : '',
      });
    } catch (error) {
      const failure = fromGrpcError(error);
      if (failure.code === 'sales_link_inactive') return sendPage(response, 410, problemPage(await this.words(offer), 'offer_unavailable'));
      if (failure.kind === 'invalid_argument' || failure.kind === 'failed_precondition') {
        // A refused sale is recorded under its form token: a corrected form is a new sale attempt.
        return this.render(request, response, token, offer, 400, { checkoutToken: randomToken(), typed, error: failure.message });
      }
      return this.fail(request, response, error, await this.words(offer));
    }
    const checkout = sale.checkout!;
    if (checkout.status === 'completed' && !checkout.invoiceId) {
      // A trial has nothing to pay: the buyer goes where the link says (the link's own URL, from the subscription service).
      clearCookie(response, CSRF_COOKIE, { path: BASE });
      if (sale.successUrl) return response.redirect(sale.successUrl, 303);
      const words = await this.words(offer);
      return sendPage(response, 200, checkoutMessagePage(words, { title: words.t('checkout.trial_started.title'), message: words.t('checkout.trial_started.message', { name: body.name }) }));
    }
    if (!checkout.invoiceId) {
      // The billing clock has not raised the invoice yet: the same form (same token) continues this sale.
      return this.render(request, response, token, offer, 503, { checkoutToken, typed, error: (await this.words(offer)).t('checkout.order_slow') });
    }
    try {
      const save = typed.save_method === 'yes';
      const payment = await initiateFromPage(this.services, this.logger, {
        tenant: sale.tenant,
        invoiceId: checkout.invoiceId,
        phoneNumber: body.phone_number,
        provider: body.provider,
        // Per sale and payer details: a double submit finds the same payment; corrected details (or a newly ticked box) start one.
        requestId: `${checkout.id}:${body.provider}:${body.phone_number}${save ? ':save' : ''}`,
        // The buyer ticked consent: the number becomes the new customer's payment method if this payment succeeds.
        saveMethodSource: save ? 'checkout' : '',
      });
      clearCookie(response, CSRF_COOKIE, { path: BASE });
      response.redirect(payment.redirectUrl, 303);
    } catch (error) {
      const failure = fromGrpcError(error);
      if (failure.kind === 'invalid_argument' || failure.kind === 'failed_precondition') {
        // The sale stands; the same form token continues it with corrected payer details.
        return this.render(request, response, token, offer, 400, { checkoutToken, typed, error: failure.message });
      }
      this.fail(request, response, error, await this.words(offer));
    }
  }

  private async offer(token: string, request: FastifyRequest, response: FastifyReply): Promise<salesLinkV1.GetSalesLinkPageResponse | undefined> {
    try {
      const page = await this.services.subscription.getSalesLinkPage({ token });
      if (page.salesLink!.active) return page;
      sendPage(response, 410, problemPage(await this.words(page), 'offer_unavailable'));
    } catch (error) {
      const failure = fromGrpcError(error);
      // No page, no seller to learn a language from: English.
      if (failure.code === 'plan_archived') sendPage(response, 410, problemPage(messages(DEFAULT_LOCALE), 'offer_unavailable'));
      else this.fail(request, response, error);
    }
    return undefined;
  }

  private async render(
    request: FastifyRequest,
    response: FastifyReply,
    token: string,
    page: salesLinkV1.GetSalesLinkPageResponse,
    status: number,
    view: Pick<CheckoutView, 'checkoutToken' | 'typed' | 'error'>,
  ): Promise<void> {
    const link = page.salesLink!;
    const accountId = page.tenant!.accountId;
    const [words, seller] = await Promise.all([this.words(page), this.accounts.getAccount(accountId).then((account) => pageSeller(this.services, accountId, account.name))]);
    const amount = moneyFromMessage(page.offer!.amount);
    const csrf = randomToken();
    setCookie(response, CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure: isHttps(request), path: BASE });
    sendPage(response, status, checkoutPage({
      action: `${BASE}/${encodeURIComponent(token)}`,
      csrf,
      title: link.title,
      planName: page.offer!.planName,
      amountMinor: amount.amountMinor,
      currency: amount.currency,
      interval: link.billingInterval,
      oneTime: link.kind === 'one_time',
      trialDays: link.trialDays,
      allowPromotionCodes: link.allowPromotionCodes,
      livemode: link.livemode,
      seller,
      words,
      ...view,
    }));
  }

  /** `words`: the seller's, once the link is found; before that nobody is known and the page is English. */
  private fail(request: FastifyRequest, response: FastifyReply, error: unknown, words: Messages = messages(DEFAULT_LOCALE)): void {
    const failure = apiErrorOf(error, request.raw);
    if (failure.status === 404) return sendPage(response, 404, problemPage(words, 'offer_missing'));
    if (failure.status >= 500) this.logger.warn(`checkout page failed: ${failure.code}: ${failure.message}`);
    sendPage(response, failure.status >= 500 ? 503 : failure.status, problemPage(words, 'failed', failure.status >= 500 ? undefined : failure.message));
  }

  /** The checkout's language: the account's default_locale (the buyer is not a customer yet; docs/localization.md#which-language). */
  private async words(page: salesLinkV1.GetSalesLinkPageResponse): Promise<Messages> {
    return messages(resolveLocale(await accountDefaultLocale(this.services, page.tenant!.accountId)));
  }
}

function problemPage(words: Messages, problem: PageProblem, detail?: string): string {
  return checkoutMessagePage(words, problemText(words, problem, detail));
}
