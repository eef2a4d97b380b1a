import { DEFAULT_LOCALE, type Messages, messages } from '@recur/i18n';
import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { type InvoiceJson, presentInvoice, toTenantMessage } from '@recur/contracts';
import { newId, type TenantRef } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountsService } from '../../accounts/accounts.service';
import { apiErrorOf } from '../../http/api-exception.filter';
import { createValidationPipe } from '../../http/validation';
import { ServiceClients } from '../../infrastructure/service-clients';
import { InitiatePaymentDto } from '../../payments/payments.dto';
import { linkProblemPage } from '../customer-portal/customer-portal.html';
import { cookieValue, field, formOf, isHttps, randomToken, sameOrigin, sendPage, setCookie, tokensMatch } from '../page-kit';
import { pageMessages } from '../page-locale';
import { initiateFromPage } from '../page-payments';
import { pageSeller, type PageSeller } from '../page-seller';
import { PAGES_LOGGER } from '../pages-logger';
import { invoicePaidPage, invoicePaymentPage, type InvoicePaymentView, invoiceVoidPage } from './invoice-payment.html';

const CSRF_COOKIE = 'recur_pay_csrf';
/** A payment token as invoicing makes it: 32 random bytes, base64url (43 characters). */
const PAYMENT_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const PAYABLE = new Set(['open', 'failed']);

interface PayableInvoice {
  tenant: TenantRef;
  invoice: InvoiceJson;
  sellerName: string;
  seller: PageSeller;
  words: Messages;
}

/**
 * The hosted payment page of an invoice (`/pay/<payment token>`, the invoice's `payment_url`):
 * the amount due, and a form (provider, phone number) that starts a payment through
 * PaymentsService.InitiatePayment — as `POST /v1/payments/initiate` would for the invoice's
 * app — and sends the payer on to the payment's page (the sandbox payer page or pawaPay's).
 * The token, made by invoicing at finalization, is the only credential: an invoice id is no
 * secret. The form carries a double-submit CSRF token and is refused from another origin.
 */
@Controller('pay')
export class InvoicePaymentController {
  private readonly validation = createValidationPipe();

  constructor(
    private readonly services: ServiceClients,
    private readonly accounts: AccountsService,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
  ) {}

  @Get(':token')
  async show(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const found = await this.find(token, request, response);
    if (found) this.render(request, response, token, found, 200, {});
  }

  @Post(':token')
  async pay(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const found = await this.find(token, request, response);
    if (!found) return;
    const form = formOf(request);
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, CSRF_COOKIE), form.csrf)) {
      return sendPage(response, 403, linkProblemPage(found.words, 'form_expired'));
    }
    // Paid or voided since the page was shown: the page says so.
    if (!PAYABLE.has(found.invoice.status)) return this.render(request, response, token, found, 200, {});
    const typed = { provider: field(form, 'provider'), phoneNumber: field(form, 'phone_number').trim(), saveMethod: field(form, 'save_method') === 'yes' };
    try {
      const body = (await this.validation.transform(
        // No provider picked: the payments service predicts it from the number.
        { invoice_id: found.invoice.id, phone_number: typed.phoneNumber, provider: typed.provider === '' ? undefined : typed.provider },
        { type: 'body', metatype: InitiatePaymentDto },
      )) as InitiatePaymentDto;
      const payment = await initiateFromPage(this.services, this.logger, {
        tenant: toTenantMessage(found.tenant),
        invoiceId: body.invoice_id,
        phoneNumber: body.phone_number,
        provider: body.provider ?? '',
        requestId: newId('req'),
        // The payer ticked consent: the number becomes the customer's payment method if this payment succeeds.
        saveMethodSource: typed.saveMethod ? 'payment_page' : '',
      });
      response.redirect(payment.redirectUrl, 303);
    } catch (error) {
      const failure = apiErrorOf(error, request.raw);
      if (failure.status >= 500) return this.fail(request, response, error, found.words);
      this.render(request, response, token, found, failure.status, { error: failure.message, typed });
    }
  }

  private render(request: FastifyRequest, response: FastifyReply, token: string, found: PayableInvoice, status: number, messages: Pick<InvoicePaymentView, 'error' | 'typed'>): void {
    const { invoice, sellerName, seller, words } = found;
    if (invoice.status === 'void') return sendPage(response, 410, invoiceVoidPage({ invoice, sellerName, seller, words }));
    if (!PAYABLE.has(invoice.status)) return sendPage(response, 200, invoicePaidPage({ invoice, sellerName, seller, words }));
    const csrf = randomToken();
    setCookie(response, CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure: isHttps(request), path: '/pay' });
    sendPage(response, status, invoicePaymentPage({ action: `/pay/${encodeURIComponent(token)}`, csrf, sellerName, seller, invoice, words, ...messages }));
  }

  /** The token's invoice, its tenant and its seller; answers the 404 page itself for an unknown token. */
  private async find(token: string, request: FastifyRequest, response: FastifyReply): Promise<PayableInvoice | undefined> {
    if (!PAYMENT_TOKEN.test(token)) return this.notFound(response);
    try {
      const { tenant, invoice } = await this.services.invoicing.getInvoiceForPayment({ paymentToken: token });
      const tenantRef = { accountId: tenant!.accountId, livemode: tenant!.livemode };
      const { name } = await this.accounts.getAccount(tenantRef.accountId);
      const [seller, words] = await Promise.all([pageSeller(this.services, tenantRef.accountId, name), pageMessages(this.services, tenantRef, invoice!.customerId)]);
      return { tenant: tenantRef, invoice: presentInvoice(invoice!), sellerName: name, seller, words };
    } catch (error) {
      this.fail(request, response, error);
      return undefined;
    }
  }

  private notFound(response: FastifyReply): undefined {
    // A link that names no invoice names no customer either: English.
    sendPage(response, 404, linkProblemPage(messages(DEFAULT_LOCALE), 'payment_link_missing'));
    return undefined;
  }

  /** `words`: the invoice's customer's, once the invoice is found; before that nobody is known and the page is English. */
  private fail(request: FastifyRequest, response: FastifyReply, error: unknown, words: Messages = messages(DEFAULT_LOCALE)): void {
    const failure = apiErrorOf(error, request.raw);
    if (failure.status === 404) return void this.notFound(response);
    if (failure.status >= 500) this.logger.warn(`payment page failed: ${failure.code}: ${failure.message}`);
    sendPage(response, failure.status >= 500 ? 503 : failure.status, linkProblemPage(words, 'failed', failure.status >= 500 ? undefined : failure.message));
  }
}
