import { randomBytes } from 'node:crypto';
import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { fromGrpcError, moneyFromMessage, type paymentsV1 } from '@recur/contracts';
import type { JsonLogger } from '@recur/telemetry';
import type { Request, Response } from 'express';
import { ServiceClients } from '../infrastructure/service-clients';
import { cookieValue, sameOrigin, tokensMatch } from './page-kit';
import { PAGES_LOGGER } from './pages-logger';
import { errorPage, notFoundPage, type PagePayment, returnPage, sandboxPayerPage } from './payer-pages.html';

/** The CSRF cookie of the sandbox payer page (double submit: the form carries the same value). */
const CSRF_COOKIE = 'recur_csrf';

/**
 * Pages served outside `/v1`, without a key: the sandbox payer page (`/sandbox/pay/<token>`) and
 * the return page (`/pay/return/<token>`). The token — 32 random bytes, made by payments for
 * each payment — is the only credential; pages are never cached, never framed, send no
 * Referer to another origin (the token is in the URL) and load nothing from elsewhere. Approve and Decline are
 * form posts guarded by a double-submit CSRF token and, when the browser sends one, an Origin
 * check.
 */
@Controller()
export class PayerPagesController {
  constructor(
    private readonly services: ServiceClients,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
  ) {}

  @Get('sandbox/pay/:token')
  async sandboxPage(@Param('token') token: string, @Res() response: Response): Promise<void> {
    const page = await this.payerPage(token, response);
    if (!page) return;
    if (!page.sandbox) return this.send(response, 404, notFoundPage());
    const csrf = randomBytes(24).toString('base64url');
    response.cookie(CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', path: '/sandbox/pay', secure: false });
    this.send(response, 200, sandboxPayerPage(toPagePayment(page.payment!), token, csrf, page.expectedOutcome));
  }

  @Post('sandbox/pay/:token')
  async decide(@Param('token') token: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    const form = (request.body ?? {}) as Record<string, unknown>;
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, CSRF_COOKIE), form.csrf)) {
      return this.send(response, 403, errorPage('This form has expired or did not come from this page. Reload the page and try again.'));
    }
    try {
      await this.services.payments.decideSandboxPayment({ token, decision: String(form.decision ?? '') });
    } catch (error) {
      return this.fail(response, error);
    }
    response.clearCookie(CSRF_COOKIE, { path: '/sandbox/pay' });
    response.redirect(303, `/pay/return/${encodeURIComponent(token)}`);
  }

  @Get('pay/return/:token')
  async returned(@Param('token') token: string, @Res() response: Response): Promise<void> {
    const page = await this.payerPage(token, response);
    if (page) this.send(response, 200, returnPage(toPagePayment(page.payment!)));
  }

  private async payerPage(token: string, response: Response): Promise<paymentsV1.GetPayerPageResponse | undefined> {
    try {
      return await this.services.payments.getPayerPage({ token });
    } catch (error) {
      this.fail(response, error);
      return undefined;
    }
  }

  private fail(response: Response, failure: unknown): void {
    const error = fromGrpcError(failure);
    if (error.kind === 'not_found') return this.send(response, 404, notFoundPage());
    if (error.kind === 'invalid_argument') return this.send(response, 400, errorPage(error.message));
    this.logger.warn(`payer page failed: ${error.code}: ${error.message}`);
    this.send(response, error.kind === 'unavailable' ? 503 : 500, errorPage('The payment service is not available right now. Try again in a moment.'));
  }

  private send(response: Response, status: number, html: string): void {
    response
      .status(status)
      .set({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        // The token is in the URL: no Referer leaves for another origin; same-origin posts keep
        // their Origin header (under no-referrer a browser sends `Origin: null`).
        'referrer-policy': 'same-origin',
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      })
      .send(html);
  }
}

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
