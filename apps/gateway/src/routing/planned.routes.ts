import { defineRoutes, planned } from './define-routes';

/**
 * Routes of the interface whose capabilities have not landed. Each is authenticated and policed
 * like the others, answers 501 not_implemented and is documented as planned; a capability
 * moves its rows into its own `<resource>.routes.ts` with handlers when it lands.
 */
export const PLANNED_ROUTES = [
  ...defineRoutes('Subscriptions', [
    planned('POST', '/v1/subscriptions', 'Create a subscription'),
    planned('GET', '/v1/subscriptions', 'List subscriptions'),
    planned('GET', '/v1/subscriptions/:id', 'Retrieve a subscription'),
    planned('POST', '/v1/subscriptions/:id/cancel', 'Cancel a subscription immediately'),
    planned('POST', '/v1/subscriptions/:id/pause', 'Pause a subscription'),
    planned('POST', '/v1/subscriptions/:id/resume', 'Resume a paused subscription'),
    planned('POST', '/v1/subscriptions/:id/change-plan', 'Change plan or quantity'),
    planned('DELETE', '/v1/subscriptions/:id/pending-change', 'Cancel a deferred plan change'),
    planned('POST', '/v1/subscriptions/:id/reactivate', 'Reactivate a cancelled subscription'),
    planned('POST', '/v1/subscriptions/:id/extend-trial', 'Extend the trial'),
    planned('POST', '/v1/subscriptions/:id/billing-interval', 'Change the billing interval'),
    planned('POST', '/v1/subscriptions/:id/promotion-code', 'Apply a promotion code'),
    planned('DELETE', '/v1/subscriptions/:id/promotion-code', 'Remove the promotion code'),
    planned('GET', '/v1/subscriptions/:id/upcoming-invoice', 'Preview the upcoming invoice'),
    planned('GET', '/v1/subscriptions/:id/addons', "List a subscription's add-ons"),
    planned('POST', '/v1/subscriptions/:id/addons', 'Add an add-on to a subscription'),
    planned('PATCH', '/v1/subscriptions/:id/addons/:addonId', 'Update a subscription add-on'),
    planned('DELETE', '/v1/subscriptions/:id/addons/:addonId', 'Remove a subscription add-on'),
  ]),
  ...defineRoutes('Invoices', [
    planned('POST', '/v1/invoices/:id/resend', 'Resend an invoice by e-mail'),
  ]),
  ...defineRoutes('Payments', [
    planned('POST', '/v1/payments/initiate', 'Start paying an invoice'),
    planned('POST', '/v1/refunds', 'Fully refund a paid invoice'),
    planned('GET', '/v1/refunds', 'List credit notes'),
  ]),
  ...defineRoutes('Usage', [
    planned('POST', '/v1/usage', 'Record usage'),
    planned('GET', '/v1/usage', "List a subscription's usage"),
    planned('GET', '/v1/usage/alerts', 'List recent threshold alerts'),
  ]),
  ...defineRoutes('Sales links', [
    planned('POST', '/v1/sales-links', 'Create a sales link'),
    planned('GET', '/v1/sales-links', 'List sales links'),
    planned('GET', '/v1/sales-links/:id', 'Retrieve a sales link'),
    planned('GET', '/v1/sales-links/:id/checkouts', 'List sales made through a link'),
    planned('POST', '/v1/sales-links/:id/deactivate', 'Deactivate a sales link'),
    planned('POST', '/v1/sales-links/:id/activate', 'Activate a sales link'),
  ]),
];
