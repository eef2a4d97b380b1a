import { DEFAULT_LOCALE, type Messages, messages, resolveLocale } from '@recur/i18n';
import { Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { type CustomerJson, type InvoiceJson, type SubscriptionJson, toTenantMessage } from '@recur/contracts';
import { newId } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountsService } from '../../accounts/accounts.service';
import { UpdateCustomerDto } from '../../customers/customers.dto';
import { apiErrorOf } from '../../http/api-exception.filter';
import type { ListEnvelope } from '../../http/list';
import { createValidationPipe } from '../../http/validation';
import { ServiceClients } from '../../infrastructure/service-clients';
import type { FileAnswer } from '../../routing/define-routes';
import { declaredRoute, RouteRunner } from '../../routing/route-runner';
import { cookieValue, field, formOf, isHttps, randomToken, sameOrigin, sendPage, setCookie, tokensMatch } from '../page-kit';
import { accountDefaultLocale, pageMessages } from '../page-locale';
import { pageSeller } from '../page-seller';
import { PAGES_LOGGER } from '../pages-logger';
import { CustomerPortalLinks, type PortalClaims } from './customer-portal-links';
import { type BillingForm, checkBillingForm, customerPortalPage, type CustomerPortalView, linkProblemPage } from './customer-portal.html';

const CSRF_COOKIE = 'recur_customer_portal_csrf';
const NOTICES: Record<string, string> = {
  'details-saved': 'portal.notice.details_saved',
  'billing-saved': 'portal.notice.billing_saved',
  'cancelled': 'portal.notice.cancelled',
};

const ROUTES = {
  getCustomer: declaredRoute('GET', '/v1/customers/:id'),
  listSubscriptions: declaredRoute('GET', '/v1/subscriptions'),
  getSubscription: declaredRoute('GET', '/v1/subscriptions/:id'),
  cancelSubscription: declaredRoute('POST', '/v1/subscriptions/:id/cancel'),
  listInvoices: declaredRoute('GET', '/v1/invoices'),
  getInvoice: declaredRoute('GET', '/v1/invoices/:id'),
  invoicePdf: declaredRoute('GET', '/v1/invoices/:id/pdf'),
};

/**
 * The customer portal (`/customer-portal/<token>`): one customer, through a signed link made
 * by `POST /v1/customers/:id/portal-sessions`, sees their subscriptions and invoices (PDF, and
 * a pay link for open or failed ones), changes their name and e-mail (customer.updated with
 * `source: "portal"`) and, when the account allows it (developer portal → Settings), cancels at
 * period end. Reads and the cancellation run the `/v1` routes as the link's app; every object
 * is checked to be the customer's own. Forms carry a double-submit CSRF token.
 */
@Controller('customer-portal')
export class CustomerPortalController {
  private readonly validation = createValidationPipe();

  constructor(
    private readonly links: CustomerPortalLinks,
    private readonly accounts: AccountsService,
    private readonly routes: RouteRunner,
    private readonly services: ServiceClients,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
  ) {}

  @Get(':token')
  async show(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('notice') notice?: string): Promise<void> {
    const claims = await this.claims(token, response);
    if (claims) await this.render(request, response, token, claims, 200, { notice: NOTICES[notice ?? ''] });
  }

  @Post(':token/details')
  async updateDetails(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const claims = await this.postClaims(token, request, response);
    if (!claims) return;
    const form = formOf(request);
    const typed = { name: field(form, 'name').trim(), email: field(form, 'email').trim() };
    try {
      const body = (await this.validation.transform(typed, { type: 'body', metatype: UpdateCustomerDto })) as UpdateCustomerDto;
      await this.services.subscription.updateCustomer({
        tenant: toTenantMessage(claims.tenant),
        id: claims.customerId,
        name: body.name,
        email: body.email,
        source: 'portal',
        requestId: newId('req'),
      });
      response.redirect(`${this.base(token)}?notice=details-saved`, 303);
    } catch (error) {
      const failure = apiErrorOf(error, request.raw);
      await this.render(request, response, token, claims, failure.status, { error: failure.message, typed });
    }
  }

  /**
   * The billing address and the first tax id (docs/api/portals.md#customer-portal-customer-portaltoken): checked here
   * by the same rules as the API (@recur/vocabulary) so a refusal reads in the customer's
   * language, then saved through UpdateCustomer, the path `/v1` takes, so customer.updated fires
   * (`source: "portal"`). Tax ids after the first, set through the API, are kept.
   */
  @Post(':token/billing')
  async updateBilling(@Param('token') token: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const claims = await this.postClaims(token, request, response);
    if (!claims) return;
    const form = formOf(request);
    const billing: BillingForm = {
      line1: field(form, 'line1'), line2: field(form, 'line2'), postal_code: field(form, 'postal_code'), city: field(form, 'city'),
      region: field(form, 'region'), country: field(form, 'country'), tax_id_type: field(form, 'tax_id_type'), tax_id_value: field(form, 'tax_id_value'),
    };
    const checked = checkBillingForm(billing);
    if ('problem' in checked) return this.render(request, response, token, claims, 400, { errorKey: checked.problem, typedBilling: billing });
    try {
      const customer = (await this.run(claims, ROUTES.getCustomer, { params: { id: claims.customerId } })) as CustomerJson;
      const others = customer.tax_ids.slice(1);
      await this.services.subscription.updateCustomer({
        tenant: toTenantMessage(claims.tenant),
        id: claims.customerId,
        address: checked.address ?? undefined,
        clearAddress: checked.address === null,
        taxIds: { taxIds: checked.taxId ? [checked.taxId, ...others] : others },
        source: 'portal',
        requestId: newId('req'),
      });
      response.redirect(`${this.base(token)}?notice=billing-saved`, 303);
    } catch (error) {
      const failure = apiErrorOf(error, request.raw);
      await this.render(request, response, token, claims, failure.status, { error: failure.message, typedBilling: billing });
    }
  }

  @Post(':token/subscriptions/:id/cancel')
  async cancel(@Param('token') token: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const claims = await this.postClaims(token, request, response);
    if (!claims) return;
    try {
      const account = await this.accounts.getAccount(claims.tenant.accountId);
      if (!account.portalAllowsCancellation) {
        return await this.render(request, response, token, claims, 403, { error: `${account.name} does not allow cancelling here. Please contact them.` });
      }
      const subscription = (await this.run(claims, ROUTES.getSubscription, { params: { id } })) as SubscriptionJson;
      if (subscription.customer !== claims.customerId) return sendPage(response, 404, linkProblemPage(await this.words(claims), 'subscription_missing'));
      await this.run(claims, ROUTES.cancelSubscription, { params: { id }, body: { at_period_end: true } });
      response.redirect(`${this.base(token)}?notice=cancelled`, 303);
    } catch (error) {
      const failure = apiErrorOf(error, request.raw);
      await this.render(request, response, token, claims, failure.status, { error: failure.message });
    }
  }

  @Get(':token/invoices/:id/pdf')
  async pdf(@Param('token') token: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const claims = await this.claims(token, response);
    if (!claims) return;
    try {
      const invoice = (await this.run(claims, ROUTES.getInvoice, { params: { id } })) as InvoiceJson;
      if (invoice.customer !== claims.customerId) return sendPage(response, 404, linkProblemPage(await this.words(claims), 'invoice_missing'));
      const { name: accountName } = await this.accounts.getAccount(claims.tenant.accountId);
      const { content, filename } = (await this.run(claims, ROUTES.invoicePdf, { params: { id }, accountName })) as FileAnswer;
      response
        .code(200)
        .headers({ 'content-type': 'application/pdf', 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
        .send(Buffer.from(content));
    } catch (error) {
      await this.fail(request, response, error, claims);
    }
  }

  private async render(
    request: FastifyRequest,
    response: FastifyReply,
    token: string,
    claims: PortalClaims,
    status: number,
    shown: Pick<CustomerPortalView, 'notice' | 'error' | 'errorKey' | 'typed' | 'typedBilling'>,
  ): Promise<void> {
    try {
      const customer = (await this.run(claims, ROUTES.getCustomer, { params: { id: claims.customerId } })) as CustomerJson;
      if (customer.deleted) return sendPage(response, 410, linkProblemPage(await this.words(claims), 'account_closed'));
      const query = { customer: claims.customerId, limit: '100' };
      const [subscriptions, invoices, account, accountLocale] = await Promise.all([
        this.run(claims, ROUTES.listSubscriptions, { query }) as Promise<ListEnvelope<SubscriptionJson>>,
        this.run(claims, ROUTES.listInvoices, { query }) as Promise<ListEnvelope<InvoiceJson>>,
        this.accounts.getAccount(claims.tenant.accountId),
        accountDefaultLocale(this.services, claims.tenant.accountId),
      ]);
      const csrf = randomToken();
      setCookie(response, CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure: isHttps(request), path: '/customer-portal' });
      const seller = await pageSeller(this.services, claims.tenant.accountId, account.name);
      sendPage(response, status, customerPortalPage({
        base: this.base(token),
        csrf,
        sellerName: account.name,
        seller,
        customer,
        subscriptions: subscriptions.data,
        // A draft is not the customer's business yet.
        invoices: invoices.data.filter((invoice) => invoice.status !== 'draft'),
        allowsCancellation: account.portalAllowsCancellation,
        expiresAt: claims.expiresAt,
        words: messages(resolveLocale(customer.preferred_locale, accountLocale)),
        ...shown,
      }));
    } catch (error) {
      await this.fail(request, response, error, claims);
    }
  }

  /** Runs a `/v1` route as the link's app; `accountName` is the seller printed on PDFs. */
  private run(
    claims: PortalClaims,
    route: (typeof ROUTES)[keyof typeof ROUTES],
    input: { params?: Record<string, string>; body?: unknown; query?: Record<string, unknown>; accountName?: string },
  ) {
    return this.routes.run(route, { ...input, tenant: claims.tenant, accountName: input.accountName ?? '', commandId: newId('req') });
  }

  private base(token: string): string {
    return `/customer-portal/${encodeURIComponent(token)}`;
  }

  private async claims(token: string, response: FastifyReply): Promise<PortalClaims | undefined> {
    const check = await this.links.check(token).catch(() => ({ status: 'invalid' as const }));
    if (check.status === 'valid') return check.claims;
    if (check.status === 'expired') {
      sendPage(response, 410, linkProblemPage(await this.words(check.claims), 'link_expired'));
    } else {
      // Nobody can be told apart by a link that is not valid: English.
      sendPage(response, 403, linkProblemPage(messages(DEFAULT_LOCALE), 'link_invalid'));
    }
    return undefined;
  }

  private async postClaims(token: string, request: FastifyRequest, response: FastifyReply): Promise<PortalClaims | undefined> {
    const claims = await this.claims(token, response);
    if (!claims) return undefined;
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, CSRF_COOKIE), formOf(request).csrf)) {
      sendPage(response, 403, linkProblemPage(await this.words(claims), 'form_expired'));
      return undefined;
    }
    return claims;
  }

  private async fail(request: FastifyRequest, response: FastifyReply, error: unknown, claims: PortalClaims): Promise<void> {
    const failure = apiErrorOf(error, request.raw);
    const words = await this.words(claims);
    if (failure.status === 404) return sendPage(response, 404, linkProblemPage(words, 'item_missing'));
    if (failure.status >= 500) this.logger.warn(`customer portal failed: ${failure.code}: ${failure.message}`);
    sendPage(response, failure.status >= 500 ? 503 : failure.status, linkProblemPage(words, 'failed', failure.status >= 500 ? undefined : failure.message));
  }

  /** The words of the link's customer (docs/localization.md#which-language). */
  private words(claims: PortalClaims): Promise<Messages> {
    return pageMessages(this.services, claims.tenant, claims.customerId);
  }
}
