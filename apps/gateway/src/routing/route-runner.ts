import { Inject, Injectable } from '@nestjs/common';
import { toTenantMessage } from '@recur/contracts';
import type { TenantRef } from '@recur/kernel';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config';
import { ApiError } from '../http/api-error';
import { createValidationPipe } from '../http/validation';
import { ServiceClients } from '../infrastructure/service-clients';
import { CustomerPortalLinks } from '../pages/customer-portal/customer-portal-links';
import type { HttpMethod, RouteDefinition } from './define-routes';
import { ROUTES } from './route-table';

/** Who a route runs for, and with what input. */
export interface RouteCall {
  tenant: TenantRef;
  accountName: string;
  commandId: string;
  params?: Record<string, string>;
  body?: unknown;
  query?: Record<string, unknown>;
}

/** The declaration of `method path` (the path as declared, `/v1/webhooks/:id/test`); a typo is a programming error. */
export function declaredRoute(method: HttpMethod, path: string): RouteDefinition {
  const route = ROUTES.find((entry) => entry.method === method && entry.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  return route;
}

/**
 * Runs a declared route: validates its body and query (400), calls its handler. The `/v1`
 * dispatcher runs every API request through it, and the portals run the same routes for a
 * signed-in account holder, so a page obeys exactly the API's rules.
 */
@Injectable()
export class RouteRunner {
  private readonly validation = createValidationPipe();

  constructor(
    private readonly services: ServiceClients,
    private readonly customerPortal: CustomerPortalLinks,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async run(route: RouteDefinition, call: RouteCall): Promise<unknown> {
    if (!route.handler) throw new ApiError(501, 'not_implemented', `${route.method} ${route.path} is part of the API but not available yet.`);
    const body = route.body ? (route.validBody?.(call.body) ?? (await this.validation.transform(call.body ?? {}, { type: 'body', metatype: route.body }))) : undefined;
    const query = route.query ? await this.validation.transform({ ...call.query }, { type: 'query', metatype: route.query }) : undefined;
    return route.handler({
      services: this.services,
      customerPortal: this.customerPortal,
      salesLinkUrl: this.config.salesLinkUrl,
      tenant: toTenantMessage(call.tenant),
      accountName: call.accountName,
      commandId: call.commandId,
      params: call.params ?? {},
      body,
      query,
    });
  }
}
