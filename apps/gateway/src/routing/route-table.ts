/**
 * Every route of the interface specification, in one table. The authentication and
 * policy middleware consult it before any handler runs, so the key rules hold for
 * routes whose handlers have not landed yet; the OpenAPI document is built from it.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteEntry {
  method: HttpMethod;
  /** Express-style path: `/v1/plans/:id/tiers`. */
  path: string;
  summary: string;
  tag: string;
  /** True for the four plan reads a publishable key may call. */
  publishable: boolean;
  /** Reads never change state; a read_only key may call only these. */
  read: boolean;
}

type Row = [HttpMethod, string, string, ('P' | '')?];

const TABLE: Record<string, Row[]> = {
  Customers: [
    ['POST', '/v1/customers', 'Create a customer'],
    ['GET', '/v1/customers', 'List customers'],
    ['GET', '/v1/customers/:id', 'Retrieve a customer'],
    ['PATCH', '/v1/customers/:id', 'Update a customer'],
    ['DELETE', '/v1/customers/:id', 'Delete a customer (soft delete)'],
  ],
  Plans: [
    ['POST', '/v1/plans', 'Create a plan'],
    ['GET', '/v1/plans', 'List plans', 'P'],
    ['GET', '/v1/plans/:id', 'Retrieve a plan', 'P'],
    ['PATCH', '/v1/plans/:id', 'Update a plan'],
    ['DELETE', '/v1/plans/:id', 'Archive a plan'],
    ['POST', '/v1/plans/:id/restore', 'Restore an archived plan'],
    ['POST', '/v1/plans/:id/clone', 'Clone a plan'],
    ['GET', '/v1/plans/:id/tiers', "List a plan's tiers", 'P'],
    ['PUT', '/v1/plans/:id/tiers', "Replace a plan's tiers"],
    ['GET', '/v1/plans/:id/price-components', "List a plan's price components", 'P'],
    ['POST', '/v1/plans/:id/price-components', 'Add a price component'],
    ['PATCH', '/v1/plans/:id/price-components/:componentId', 'Update a price component'],
    ['DELETE', '/v1/plans/:id/price-components/:componentId', 'Delete a price component'],
  ],
  Subscriptions: [
    ['POST', '/v1/subscriptions', 'Create a subscription'],
    ['GET', '/v1/subscriptions', 'List subscriptions'],
    ['GET', '/v1/subscriptions/:id', 'Retrieve a subscription'],
    ['POST', '/v1/subscriptions/:id/cancel', 'Cancel a subscription immediately'],
    ['POST', '/v1/subscriptions/:id/pause', 'Pause a subscription'],
    ['POST', '/v1/subscriptions/:id/resume', 'Resume a paused subscription'],
    ['POST', '/v1/subscriptions/:id/change-plan', 'Change plan or quantity'],
    ['DELETE', '/v1/subscriptions/:id/pending-change', 'Cancel a deferred plan change'],
    ['POST', '/v1/subscriptions/:id/reactivate', 'Reactivate a cancelled subscription'],
    ['POST', '/v1/subscriptions/:id/extend-trial', 'Extend the trial'],
    ['POST', '/v1/subscriptions/:id/billing-interval', 'Change the billing interval'],
    ['POST', '/v1/subscriptions/:id/promotion-code', 'Apply a promotion code'],
    ['DELETE', '/v1/subscriptions/:id/promotion-code', 'Remove the promotion code'],
    ['GET', '/v1/subscriptions/:id/upcoming-invoice', 'Preview the upcoming invoice'],
    ['GET', '/v1/subscriptions/:id/addons', "List a subscription's add-ons"],
    ['POST', '/v1/subscriptions/:id/addons', 'Add an add-on to a subscription'],
    ['PATCH', '/v1/subscriptions/:id/addons/:addonId', 'Update a subscription add-on'],
    ['DELETE', '/v1/subscriptions/:id/addons/:addonId', 'Remove a subscription add-on'],
  ],
  Invoices: [
    ['POST', '/v1/invoices', 'Create a one-off invoice'],
    ['GET', '/v1/invoices', 'List invoices'],
    ['GET', '/v1/invoices/:id', 'Retrieve an invoice'],
    ['GET', '/v1/invoices/:id/pdf', 'Download an invoice as PDF'],
    ['POST', '/v1/invoices/:id/finalize', 'Finalize a draft invoice'],
    ['POST', '/v1/invoices/:id/void', 'Void a draft, open or failed invoice'],
    ['POST', '/v1/invoices/:id/resend', 'Resend an invoice by e-mail'],
  ],
  Payments: [
    ['POST', '/v1/payments/initiate', 'Start paying an invoice'],
    ['POST', '/v1/refunds', 'Fully refund a paid invoice'],
    ['GET', '/v1/refunds', 'List credit notes'],
  ],
  Usage: [
    ['POST', '/v1/usage', 'Record usage'],
    ['GET', '/v1/usage', "List a subscription's usage"],
    ['GET', '/v1/usage/alerts', 'List recent threshold alerts'],
  ],
  Webhooks: [
    ['POST', '/v1/webhooks', 'Create a webhook endpoint'],
    ['GET', '/v1/webhooks', 'List webhook endpoints'],
    ['GET', '/v1/webhooks/events', 'List the available event types'],
    ['PATCH', '/v1/webhooks/:id', 'Update a webhook endpoint'],
    ['DELETE', '/v1/webhooks/:id', 'Delete a webhook endpoint'],
    ['POST', '/v1/webhooks/:id/test', 'Send a webhook.test event to this endpoint'],
    ['GET', '/v1/webhooks/:id/deliveries', "List an endpoint's deliveries"],
    ['POST', '/v1/webhooks/:id/deliveries/:deliveryId/retry', 'Retry a delivery'],
  ],
  'Add-ons': [
    ['GET', '/v1/addons', 'List add-ons'],
    ['GET', '/v1/addons/:id', 'Retrieve an add-on'],
    ['POST', '/v1/addons', 'Create an add-on'],
    ['PATCH', '/v1/addons/:id', 'Update an add-on'],
    ['DELETE', '/v1/addons/:id', 'Take an add-on off sale'],
    ['POST', '/v1/addons/:id/restore', 'Put an add-on back on sale'],
  ],
  'Coupons and promotion codes': [
    ['GET', '/v1/coupons', 'List coupons'],
    ['POST', '/v1/coupons', 'Create a coupon'],
    ['PATCH', '/v1/coupons/:id', 'Update a coupon'],
    ['DELETE', '/v1/coupons/:id', 'Delete a coupon'],
    ['GET', '/v1/promotion-codes', 'List promotion codes'],
    ['POST', '/v1/promotion-codes', 'Create a promotion code'],
    ['PATCH', '/v1/promotion-codes/:id', 'Update a promotion code'],
    ['DELETE', '/v1/promotion-codes/:id', 'Delete a promotion code'],
  ],
  'Sales links': [
    ['POST', '/v1/sales-links', 'Create a sales link'],
    ['GET', '/v1/sales-links', 'List sales links'],
    ['GET', '/v1/sales-links/:id', 'Retrieve a sales link'],
    ['GET', '/v1/sales-links/:id/checkouts', 'List sales made through a link'],
    ['POST', '/v1/sales-links/:id/deactivate', 'Deactivate a sales link'],
    ['POST', '/v1/sales-links/:id/activate', 'Activate a sales link'],
  ],
};

export const ROUTES: readonly RouteEntry[] = Object.entries(TABLE).flatMap(([tag, rows]) =>
  rows.map(([method, path, summary, flag]) => ({ method, path, summary, tag, publishable: flag === 'P', read: method === 'GET' })),
);

interface CompiledRoute {
  entry: RouteEntry;
  pattern: RegExp;
  /** Literal segments rank before parameters: `/v1/webhooks/events` beats `/v1/webhooks/:id`. */
  literalSegments: number;
}

const COMPILED: CompiledRoute[] = ROUTES.map((entry) => ({
  entry,
  pattern: new RegExp(`^${entry.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
  literalSegments: entry.path.split('/').filter((segment) => segment && !segment.startsWith(':')).length,
})).sort((a, b) => b.literalSegments - a.literalSegments);

export interface RouteMatch {
  entry?: RouteEntry;
  /** True when the path exists under another method (405, not 404). */
  pathExists: boolean;
}

export function matchRoute(method: string, path: string): RouteMatch {
  let pathExists = false;
  for (const route of COMPILED) {
    if (!route.pattern.test(path)) continue;
    if (route.entry.method === method) return { entry: route.entry, pathExists: true };
    pathExists = true;
  }
  return { pathExists };
}
