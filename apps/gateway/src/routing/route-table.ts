// The resources' DTOs carry decorator metadata; loading the table alone (tests, tools) needs the polyfill.
import 'reflect-metadata';
import { ACCOUNT_ROUTES } from '../account/account.routes';
import { ADDON_ROUTES } from '../addons/addons.routes';
import { COUPON_ROUTES } from '../coupons/coupons.routes';
import { CUSTOMER_ROUTES } from '../customers/customers.routes';
import { CUSTOMER_BALANCE_ROUTES } from '../customer-balances/customer-balances.routes';
import { DUNNING_SCHEDULE_ROUTES } from '../dunning/dunning-schedule.routes';
import { INVOICE_ROUTES } from '../invoices/invoices.routes';
import { PAYMENT_ROUTES } from '../payments/payments.routes';
import { PLAN_ROUTES } from '../plans/plans.routes';
import { REFUND_ROUTES } from '../refunds/refunds.routes';
import { CREDIT_NOTE_ROUTES } from '../credit-notes/credit-notes.routes';
import { PROMOTION_CODE_ROUTES } from '../promotion-codes/promotion-codes.routes';
import { SALES_LINK_ROUTES } from '../sales-links/sales-links.routes';
import { SUBSCRIPTION_ROUTES } from '../subscriptions/subscriptions.routes';
import { TEST_CLOCK_ROUTES } from '../test-clocks/test-clocks.routes';
import { USAGE_ROUTES } from '../usage/usage.routes';
import { WALLET_ROUTES } from '../wallets/wallets.routes';
import { PAYMENT_METHOD_ROUTES } from '../payment-methods/payment-methods.routes';
import { EVENT_ROUTES } from '../events/events.routes';
import { WEBHOOK_ROUTES } from '../webhooks/webhooks.routes';
import { TAX_RATE_ROUTES } from '../tax-rates/tax-rates.routes';
import type { RouteDefinition } from './define-routes';

export type { HttpMethod, RouteDefinition as RouteEntry } from './define-routes';

/**
 * Every route of the interface, from each resource's declaration. The authentication and policy
 * middleware consult it before any handler runs (so key rules hold for planned routes too), the
 * `/v1` dispatcher runs its handlers, and the OpenAPI document is built from it.
 * A new resource adds its `<resource>.routes.ts` here.
 */
export const ROUTES: readonly RouteDefinition[] = [
  ...CUSTOMER_ROUTES,
  ...PLAN_ROUTES,
  ...WEBHOOK_ROUTES,
  ...ADDON_ROUTES,
  ...COUPON_ROUTES,
  ...PROMOTION_CODE_ROUTES,
  ...SALES_LINK_ROUTES,
  ...INVOICE_ROUTES,
  ...SUBSCRIPTION_ROUTES,
  ...TEST_CLOCK_ROUTES,
  ...USAGE_ROUTES,
  ...PAYMENT_ROUTES,
  ...REFUND_ROUTES,
  ...CREDIT_NOTE_ROUTES,
  ...WALLET_ROUTES,
  ...PAYMENT_METHOD_ROUTES,
  ...EVENT_ROUTES,
  ...DUNNING_SCHEDULE_ROUTES,
  ...ACCOUNT_ROUTES,
  ...TAX_RATE_ROUTES,
  ...CUSTOMER_BALANCE_ROUTES,
];

interface CompiledRoute {
  entry: RouteDefinition;
  pattern: RegExp;
  paramNames: string[];
  /** Literal segments rank before parameters: `/v1/webhooks/events` beats `/v1/webhooks/:id`. */
  literalSegments: number;
}

const COMPILED: CompiledRoute[] = ROUTES.map((entry) => ({
  entry,
  pattern: new RegExp(`^${entry.path.replace(/:[A-Za-z]+/g, '([^/]+)')}/?$`),
  paramNames: [...entry.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => name),
  literalSegments: entry.path.split('/').filter((segment) => segment && !segment.startsWith(':')).length,
})).sort((a, b) => b.literalSegments - a.literalSegments);

export interface RouteMatch {
  entry?: RouteDefinition;
  /** The path parameters of the matched route, decoded. */
  params?: Record<string, string>;
  /** True when the path exists under another method (405, not 404). */
  pathExists: boolean;
  /** The methods the path advertises, for a 405's `Allow` header (the documented ones; HEAD is served too). */
  allowed: string[];
}

/** HEAD is GET without the body (RFC 9110): Node drops the body, the route is the GET's. */
export function matchRoute(method: string, path: string): RouteMatch {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const allowed: string[] = [];
  // Routes are tried most literal first; a path answers as its most literal match
  // (`/v1/webhooks/events` is that route, not `/v1/webhooks/:id` with id "events").
  let literalSegments: number | undefined;
  for (const route of COMPILED) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    if (literalSegments !== undefined && route.literalSegments < literalSegments) break;
    literalSegments = route.literalSegments;
    if (route.entry.method === wanted) {
      const params = Object.fromEntries(route.paramNames.map((name, index) => [name, decodeSegment(match[index + 1])]));
      return { entry: route.entry, params, pathExists: true, allowed: [] };
    }
    allowed.push(route.entry.method);
  }
  return { pathExists: allowed.length > 0, allowed };
}

/** A malformed escape (`%zz`) is kept as it came: the service answers it as an unknown id. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
