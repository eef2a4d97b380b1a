import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { fromGrpcError, moneyFromMessage, type paymentsV1 } from '@recur/contracts';
import { type Messages, messages } from '@recur/i18n';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceClients } from '../infrastructure/service-clients';
import { clearCookie, cookieValue, randomToken, sameOrigin, sendPage, setCookie, tokensMatch } from './page-kit';
import { pageMessages } from './page-locale';
import { PAGES_LOGGER } from './pages-logger';
import { errorPage, notFoundPage, type PagePayment, returnPage, sandboxPayerPage } from './payer-pages.html';

/** The CSRF cookie of the sandbox payer page (double submit: the form carries the same value). */
const CSRF_COOKIE = 'recur_csrf';

/**
 * Pages served outside `/v1`, without a key: the sandbox payer page (`/sandbox/pay/<token>`) and
 * the return page (`/pay/return/<token>`). The token — 32 random bytes, made by payments for
 * each payment — is the only credential; pages are sent by page-kit's sendPage (never cached or
 * framed, Referer only to this origin, nothing loaded from elsewhere). Approve and Decline are
 * form posts guarded by a double-submit CSRF token and, when the browser sends one, an Origin
 * check. A paid sales-link sale leaves the return page for its link's success URL. Pages speak
 * the payment's customer's language (docs/localization.md#which-language); a token that finds no
 * payment answers in English, as nothing tells whose page it would have been.
 */

@Controller()
export class PayerPagesController {
  constructor(
    private readonly services: ServiceClients,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
  ) {}

  @Get('sandbox/pay/:token')
  async sandboxPage(@Param('token') token: string, @Res() response: FastifyReply): Promise<void> {
    const page = await this.payerPage(token, response);
    if (!page) return;
    const words = await this.wordsOf(page);
    if (!page.sandbox) return sendPage(response, 404, notFoundPage(words));
    const csrf = randomToken();
    setCookie(response, CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', path: '/sandbox/pay', secure: false });
    sendPage(response, 200, sandboxPayerPage(toPagePayment(page.payment!), token, csrf, page.expectedOutcome, words));
  }

  @Post('sandbox/pay/:token')
  async decide(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const form = (request.body ?? {}) as Record<string, unknown>;
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, CSRF_COOKIE), form.csrf)) {
      const { words } = await this.pageOfToken(token);
      return sendPage(response, 403, errorPage(words.t('payer.form_expired'), words));
    }
    try {
      await this.services.payments.decideSandboxPayment({ token, decision: String(form.decision ?? '') });
    } catch (error) {
      const { words, invoiceNumber } = await this.pageOfToken(token);
      return this.fail(response, error, words, invoiceNumber);
    }
    clearCookie(response, CSRF_COOKIE, { path: '/sandbox/pay' });
    response.redirect(`/pay/return/${encodeURIComponent(token)}`, 303);
  }

  @Get('pay/return/:token')
  async returned(@Param('token') token: string, @Res() response: FastifyReply): Promise<void> {
    const page = await this.payerPage(token, response);
    if (!page) return;
    const successUrl = page.payment!.status === 'succeeded' ? await this.saleSuccessUrl(page) : '';
    if (successUrl) return response.redirect(successUrl, 303);
    sendPage(response, 200, returnPage(toPagePayment(page.payment!), await this.wordsOf(page)));
  }

  /**
   * The success URL of the sales-link sale this payment paid, if it was one: read from the
   * link by the subscription service, never taken from the request (no open redirect). When
   * that service cannot answer, the buyer stays on the return page, which says the payment
   * was received.
   */
  private async saleSuccessUrl(page: paymentsV1.GetPayerPageResponse): Promise<string> {
    try {
      const sale = await this.services.subscription.getCheckoutOfInvoice({ tenant: page.tenant, invoiceId: page.payment!.invoiceId });
      return sale.successUrl;
    } catch (error) {
      const failure = fromGrpcError(error);
      if (failure.kind !== 'not_found') this.logger.warn(`return page: the sale of invoice ${page.payment!.invoiceId} is unknown for now: ${failure.code}: ${failure.message}`);
      return '';
    }
  }

  private async payerPage(token: string, response: FastifyReply): Promise<paymentsV1.GetPayerPageResponse | undefined> {
    try {
      return await this.services.payments.getPayerPage({ token });
    } catch (error) {
      this.fail(response, error, ENGLISH);
      return undefined;
    }
  }

  /** The language of the payment's customer (else its account's, else English). */
  private wordsOf(page: paymentsV1.GetPayerPageResponse): Promise<Messages> {
    return pageMessages(this.services, { accountId: page.tenant!.accountId, livemode: page.tenant!.livemode }, page.payment!.customerId);
  }

  /** The words and invoice of the page `token` is for, when its payment can be read; English otherwise (a refused form's page). */
  private async pageOfToken(token: string): Promise<{ words: Messages; invoiceNumber: string }> {
    try {
      const page = await this.services.payments.getPayerPage({ token });
      return { words: await this.wordsOf(page), invoiceNumber: page.payment!.invoiceNumber };
    } catch {
      return { words: ENGLISH, invoiceNumber: '' };
    }
  }

  private fail(response: FastifyReply, failure: unknown, w: Messages, invoiceNumber = ''): void {
    const error = fromGrpcError(failure);
    if (error.kind === 'not_found') return sendPage(response, 404, notFoundPage(w));
    if (error.kind === 'invalid_argument') return sendPage(response, 400, errorPage(error.message, w));
    // The invoice no longer needs paying (voided, paid by other means) or the payment was canceled: nothing is collected.
    if (error.kind === 'failed_precondition') return sendPage(response, 409, errorPage(refusal(error, w, invoiceNumber), w));
    this.logger.warn(`payer page failed: ${error.code}: ${error.message}`);
    sendPage(response, error.kind === 'unavailable' ? 503 : 500, errorPage(w.t('payer.unavailable'), w));
  }
}

/** A refusal of Approve in the page's language when the catalogue has its code (else the service's English message). */
function refusal(error: { code: string; message: string }, w: Messages, invoiceNumber: string): string {
  const key = `payer.refused.${error.code}`;
  return w.has(key) ? w.t(key, { number: invoiceNumber }) : error.message;
}

const ENGLISH = messages('en');

function toPagePayment(payment: paymentsV1.Payment): PagePayment {
  const amount = moneyFromMessage(payment.amount);
  return {
    id: payment.id,
    status: payment.status,
    amountMinor: amount.amountMinor,
    currency: amount.currency,
    invoiceNumber: payment.invoiceNumber,
    phoneNumber: payment.phoneNumber,
    provider: payment.provider,
    failureCode: payment.failureCode,
    livemode: payment.livemode,
  };
}
