import { Controller, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { WebhookDeliveryJson, WebhookEndpointJson } from '@recur/contracts';
import { toTenantMessage } from '@recur/contracts';
import { CLOCK, type Clock, newId, type TenantRef } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountsService, type ApiKeyView } from '../../accounts/accounts.service';
import { CreateKeyDto, RollKeyDto } from '../../accounts/operator.dto';
import type { AppMode } from '../../auth/api-key';
import type { ListEnvelope } from '../../http/list';
import { apiErrorOf } from '../../http/api-exception.filter';
import { createValidationPipe } from '../../http/validation';
import { ServiceClients } from '../../infrastructure/service-clients';
import { declaredRoute, RouteRunner } from '../../routing/route-runner';
import { clearCookie, cookieValue, field, formOf, isHttps, randomToken, sameOrigin, sendPage, setCookie, tokensMatch } from '../page-kit';
import { PAGES_LOGGER } from '../pages-logger';
import {
  endpointPage,
  eventsPage,
  type Flash,
  keysPage,
  portalErrorPage,
  type PortalFrame,
  type Section,
  settingsPage,
  signInPage,
  webhooksPage,
} from './developer-portal.html';
import { PORTAL_SESSION_TTL_MS, PortalUsersService, type PortalSessionView } from './portal-users.service';

const SESSION_COOKIE = 'recur_portal_session';
const SIGN_IN_CSRF_COOKIE = 'recur_portal_signin';
const EVENTS_PAGE_SIZE = 25;
const MODES: readonly AppMode[] = ['sandbox', 'live'];

/** What a redirect after a post may say (a fixed set: nothing from the URL is echoed as text). */
const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked; it stops working now.',
  'test-sent': 'A webhook.test event is on its way to this endpoint.',
  'replayed': 'The delivery is being sent again, with the same event id.',
  'saved': 'Settings saved.',
  'endpoint-enabled': 'The endpoint is enabled: events are delivered to it again.',
  'endpoint-disabled': 'The endpoint is disabled: no events are delivered to it until it is enabled.',
  'endpoint-deleted': 'The endpoint was deleted.',
};

const ROUTES = {
  listWebhooks: declaredRoute('GET', '/v1/webhooks'),
  createWebhook: declaredRoute('POST', '/v1/webhooks'),
  listDeliveries: declaredRoute('GET', '/v1/webhooks/:id/deliveries'),
  testWebhook: declaredRoute('POST', '/v1/webhooks/:id/test'),
  retryDelivery: declaredRoute('POST', '/v1/webhooks/:id/deliveries/:deliveryId/retry'),
  updateWebhook: declaredRoute('PATCH', '/v1/webhooks/:id'),
  deleteWebhook: declaredRoute('DELETE', '/v1/webhooks/:id'),
};

/**
 * The developer portal (`/portal`): an account holder signs in with e-mail and password and
 * manages the account's API keys, webhook endpoints and deliveries, and reads its events.
 * Every action goes through what the API and the operator surface use — the AccountsService
 * for keys (key_mode_mismatch included), the `/v1` routes' own validation and handlers for
 * webhooks — so the portal has no rules of its own. Sessions live in the gateway's database
 * (cookie: HttpOnly, SameSite=Lax, Secure over https); every post carries the session's CSRF
 * token and, when the browser names it, a same-origin Origin.
 */
@Controller('portal')
export class DeveloperPortalController {
  private readonly validation = createValidationPipe();

  constructor(
    private readonly users: PortalUsersService,
    private readonly accounts: AccountsService,
    private readonly routes: RouteRunner,
    private readonly services: ServiceClients,
    @Inject(PAGES_LOGGER) private readonly logger: JsonLogger,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  @Get()
  async home(@Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.users.session(cookieValue(request, SESSION_COOKIE));
    response.redirect(session ? '/portal/keys' : '/portal/sign-in', 303);
  }

  @Get('sign-in')
  signInForm(@Req() request: FastifyRequest, @Res() response: FastifyReply): void {
    sendPage(response, 200, signInPage(this.signInCsrf(request, response)));
  }

  @Post('sign-in')
  async signIn(@Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const form = formOf(request);
    if (!sameOrigin(request) || !tokensMatch(cookieValue(request, SIGN_IN_CSRF_COOKIE), form.csrf)) {
      return sendPage(response, 403, signInPage(this.signInCsrf(request, response), 'This form expired. Please sign in again.'));
    }
    const token = await this.users.signIn(field(form, 'email'), field(form, 'password'));
    if (!token) return sendPage(response, 401, signInPage(this.signInCsrf(request, response), 'The e-mail or password is not right.', field(form, 'email')));
    clearCookie(response, SIGN_IN_CSRF_COOKIE, { path: '/portal/sign-in' });
    setCookie(response, SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: isHttps(request), path: '/portal', maxAge: PORTAL_SESSION_TTL_MS });
    response.redirect('/portal/keys', 303);
  }

  @Post('sign-out')
  async signOut(@Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session) return;
    await this.users.signOut(session.sessionId);
    clearCookie(response, SESSION_COOKIE, { path: '/portal' });
    response.redirect('/portal/sign-in', 303);
  }

  // ---- API keys

  @Get('keys')
  async keys(@Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('notice') notice?: string): Promise<void> {
    const session = await this.pageSession(request, response);
    if (session) await this.renderKeys(response, session, 200, { notice: NOTICES[notice ?? ''] });
  }

  @Post('keys')
  async createKey(@Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session) return;
    const form = formOf(request);
    try {
      const input = (await this.validation.transform(
        { app: field(form, 'app'), type: field(form, 'type'), scope: field(form, 'scope') || undefined, name: field(form, 'name') || undefined },
        { type: 'body', metatype: CreateKeyDto },
      )) as CreateKeyDto;
      const key = await this.accounts.createKey(session.accountId, input);
      await this.renderKeys(response, session, 201, { newKey: key });
    } catch (error) {
      await this.renderKeys(response, session, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  @Post('keys/:keyId/roll')
  async rollKey(@Param('keyId') keyId: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session) return;
    try {
      const { expires_in_seconds } = (await this.validation.transform(
        { expires_in_seconds: Number(field(formOf(request), 'expires_in_seconds') || 0) },
        { type: 'body', metatype: RollKeyDto },
      )) as RollKeyDto;
      const key = await this.accounts.rollKey(keyId, expires_in_seconds ?? 0, session.accountId);
      await this.renderKeys(response, session, 201, { newKey: key, notice: 'The key was rolled. Its replacement is below.' });
    } catch (error) {
      await this.renderKeys(response, session, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  @Post('keys/:keyId/revoke')
  async revokeKey(@Param('keyId') keyId: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session) return;
    try {
      await this.accounts.revokeKey(keyId, session.accountId);
      response.redirect('/portal/keys?notice=key-revoked', 303);
    } catch (error) {
      await this.renderKeys(response, session, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  // ---- Webhooks

  @Get(':mode/webhooks')
  async webhooks(@Param('mode') mode: string, @Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('notice') notice?: string): Promise<void> {
    const session = await this.pageSession(request, response);
    if (session && this.knownMode(mode, response)) await this.renderWebhooks(request, response, session, mode as AppMode, 200, { notice: NOTICES[notice ?? ''] });
  }

  @Post(':mode/webhooks')
  async createWebhook(@Param('mode') mode: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session || !this.knownMode(mode, response)) return;
    const form = formOf(request);
    const events = form.events === undefined ? [] : ([] as string[]).concat(form.events);
    try {
      const endpoint = (await this.run(session, mode as AppMode, ROUTES.createWebhook, {
        body: { url: field(form, 'url'), events, ...(field(form, 'description') ? { description: field(form, 'description') } : {}) },
      })) as WebhookEndpointJson;
      await this.renderWebhooks(request, response, session, mode as AppMode, 201, { newSecret: endpoint.secret, notice: `Endpoint ${endpoint.url} added.` });
    } catch (error) {
      const failure = apiErrorOf(error, request.raw);
      await this.renderWebhooks(request, response, session, mode as AppMode, failure.status, { error: failure.message });
    }
  }

  @Get(':mode/webhooks/:id')
  async endpoint(@Param('mode') mode: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('notice') notice?: string): Promise<void> {
    const session = await this.pageSession(request, response);
    if (session && this.knownMode(mode, response)) await this.renderEndpoint(request, response, session, mode as AppMode, id, 200, { notice: NOTICES[notice ?? ''] });
  }

  @Post(':mode/webhooks/:id/secret')
  async revealSecret(@Param('mode') mode: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session || !this.knownMode(mode, response)) return;
    try {
      const { secret } = await this.services.webhookDispatch.revealEndpointSecret({ tenant: toTenantMessage(this.tenant(session, mode as AppMode)), id });
      await this.renderEndpoint(request, response, session, mode as AppMode, id, 200, { secret });
    } catch (error) {
      await this.renderEndpoint(request, response, session, mode as AppMode, id, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  @Post(':mode/webhooks/:id/test')
  async sendTest(@Param('mode') mode: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    await this.endpointAction(request, response, mode, id, ROUTES.testWebhook, { params: { id } }, 'test-sent');
  }

  /** Enable or disable (`PATCH /v1/webhooks/:id` with `status`): a disabled endpoint receives nothing. */
  @Post(':mode/webhooks/:id/status')
  async setStatus(@Param('mode') mode: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const status = field(formOf(request), 'status');
    await this.endpointAction(request, response, mode, id, ROUTES.updateWebhook, { params: { id }, body: { status } }, status === 'disabled' ? 'endpoint-disabled' : 'endpoint-enabled');
  }

  @Post(':mode/webhooks/:id/delete')
  async deleteEndpoint(@Param('mode') mode: string, @Param('id') id: string, @Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session || !this.knownMode(mode, response)) return;
    try {
      await this.run(session, mode as AppMode, ROUTES.deleteWebhook, { params: { id } });
      response.redirect(`/portal/${mode}/webhooks?notice=endpoint-deleted`, 303);
    } catch (error) {
      await this.renderEndpoint(request, response, session, mode as AppMode, id, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  @Post(':mode/webhooks/:id/deliveries/:deliveryId/replay')
  async replay(
    @Param('mode') mode: string,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @Req() request: FastifyRequest,
    @Res() response: FastifyReply,
  ): Promise<void> {
    await this.endpointAction(request, response, mode, id, ROUTES.retryDelivery, { params: { id, deliveryId } }, 'replayed');
  }

  // ---- Events and settings

  @Get(':mode/events')
  async events(@Param('mode') mode: string, @Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('offset') offsetText?: string): Promise<void> {
    const session = await this.pageSession(request, response);
    if (!session || !this.knownMode(mode, response)) return;
    const offset = Math.min(Math.max(Number.parseInt(offsetText ?? '0', 10) || 0, 0), 10_000);
    const frame = this.frame(session, 'events', mode as AppMode);
    try {
      const { events, page } = await this.services.webhookDispatch.listEvents({
        tenant: toTenantMessage(this.tenant(session, mode as AppMode)),
        page: { limit: EVENTS_PAGE_SIZE, offset },
      });
      const rows = events.map((event) => ({ id: event.id, type: event.type, created: Number(event.created), dataJson: event.dataJson }));
      sendPage(response, 200, eventsPage(frame, rows, { offset, hasMore: page?.hasMore ?? false, total: Number(page?.total ?? 0) }));
    } catch (error) {
      this.failPage(request, response, error);
    }
  }

  @Get('settings')
  async settings(@Req() request: FastifyRequest, @Res() response: FastifyReply, @Query('notice') notice?: string): Promise<void> {
    const session = await this.pageSession(request, response);
    if (!session) return;
    const account = await this.accounts.getAccount(session.accountId);
    sendPage(response, 200, settingsPage(this.frame(session, 'settings', 'sandbox'), account.portalAllowsCancellation, { notice: NOTICES[notice ?? ''] }));
  }

  @Post('settings')
  async saveSettings(@Req() request: FastifyRequest, @Res() response: FastifyReply): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session) return;
    await this.accounts.setPortalAllowsCancellation(session.accountId, field(formOf(request), 'portal_allows_cancellation') === 'on');
    response.redirect('/portal/settings?notice=saved', 303);
  }

  // ---- helpers

  private async endpointAction(
    request: FastifyRequest,
    response: FastifyReply,
    mode: string,
    id: string,
    route: (typeof ROUTES)[keyof typeof ROUTES],
    input: { params: Record<string, string>; body?: unknown },
    notice: keyof typeof NOTICES,
  ): Promise<void> {
    const session = await this.postSession(request, response);
    if (!session || !this.knownMode(mode, response)) return;
    try {
      await this.run(session, mode as AppMode, route, input);
      response.redirect(`/portal/${mode}/webhooks/${encodeURIComponent(id)}?notice=${notice}`, 303);
    } catch (error) {
      await this.renderEndpoint(request, response, session, mode as AppMode, id, apiErrorOf(error, request.raw).status, { error: apiErrorOf(error, request.raw).message });
    }
  }

  private run(session: PortalSessionView, mode: AppMode, route: (typeof ROUTES)[keyof typeof ROUTES], input: { params?: Record<string, string>; body?: unknown; query?: Record<string, unknown> }) {
    return this.routes.run(route, { tenant: this.tenant(session, mode), accountName: session.accountName, commandId: newId('req'), ...input });
  }

  private async renderKeys(response: FastifyReply, session: PortalSessionView, status: number, messages: Flash & { newKey?: ApiKeyView }): Promise<void> {
    const keys = await this.accounts.listKeys(session.accountId);
    sendPage(response, status, keysPage(this.frame(session, 'keys', 'sandbox'), keys.reverse(), Math.floor(this.now().getTime() / 1000), messages));
  }

  private async renderWebhooks(request: FastifyRequest, response: FastifyReply, session: PortalSessionView, mode: AppMode, status: number, messages: Flash & { newSecret?: string }): Promise<void> {
    try {
      const list = (await this.run(session, mode, ROUTES.listWebhooks, { query: { limit: '100' } })) as ListEnvelope<WebhookEndpointJson>;
      sendPage(response, status, webhooksPage(this.frame(session, 'webhooks', mode), list.data, messages));
    } catch (error) {
      this.failPage(request, response, error);
    }
  }

  private async renderEndpoint(
    request: FastifyRequest,
    response: FastifyReply,
    session: PortalSessionView,
    mode: AppMode,
    id: string,
    status: number,
    messages: Flash & { secret?: string },
  ): Promise<void> {
    try {
      const list = (await this.run(session, mode, ROUTES.listWebhooks, { query: { limit: '100' } })) as ListEnvelope<WebhookEndpointJson>;
      const endpoint = list.data.find((candidate) => candidate.id === id);
      if (!endpoint) return sendPage(response, 404, portalErrorPage('Endpoint not found', 'This app has no webhook endpoint with that id.'));
      const deliveries = (await this.run(session, mode, ROUTES.listDeliveries, { params: { id }, query: { limit: '20' } })) as ListEnvelope<WebhookDeliveryJson>;
      sendPage(response, status, endpointPage(this.frame(session, 'webhooks', mode), endpoint, deliveries.data, messages));
    } catch (error) {
      this.failPage(request, response, error);
    }
  }

  private failPage(request: FastifyRequest, response: FastifyReply, error: unknown): void {
    const failure = apiErrorOf(error, request.raw);
    if (failure.status >= 500) this.logger.warn(`developer portal page failed: ${failure.code}: ${failure.message}`);
    sendPage(response, failure.status, portalErrorPage('Something went wrong', failure.status >= 500 ? 'A service is not available right now. Try again in a moment.' : failure.message));
  }

  private tenant(session: PortalSessionView, mode: AppMode): TenantRef {
    return { accountId: session.accountId, livemode: mode === 'live' };
  }

  private frame(session: PortalSessionView, section: Section, mode: AppMode): PortalFrame {
    return { email: session.userEmail, accountName: session.accountName, csrf: session.csrfToken, section, mode };
  }

  private knownMode(mode: string, response: FastifyReply): boolean {
    if ((MODES as readonly string[]).includes(mode)) return true;
    sendPage(response, 404, portalErrorPage('Page not found', 'There is no such page in the developer portal.'));
    return false;
  }

  /** A page needs a session; without one the browser goes to sign-in. */
  private async pageSession(request: FastifyRequest, response: FastifyReply): Promise<PortalSessionView | undefined> {
    const session = await this.users.session(cookieValue(request, SESSION_COOKIE));
    if (!session) response.redirect('/portal/sign-in', 303);
    return session;
  }

  /** A post needs a session, its CSRF token and a same-origin Origin (when the browser sends one). */
  private async postSession(request: FastifyRequest, response: FastifyReply): Promise<PortalSessionView | undefined> {
    const session = await this.pageSession(request, response);
    if (!session) return undefined;
    if (!sameOrigin(request) || !tokensMatch(session.csrfToken, formOf(request).csrf)) {
      sendPage(response, 403, portalErrorPage('This form has expired', 'The form did not come from this portal or is out of date. Go back, reload the page and try again.'));
      return undefined;
    }
    return session;
  }

  /** Sign-in has no session yet: its form is guarded by a double-submit cookie. */
  private signInCsrf(request: FastifyRequest, response: FastifyReply): string {
    const csrf = randomToken();
    setCookie(response, SIGN_IN_CSRF_COOKIE, csrf, { httpOnly: true, sameSite: 'strict', secure: isHttps(request), path: '/portal/sign-in' });
    return csrf;
  }
}
