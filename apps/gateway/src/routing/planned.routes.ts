import { defineRoutes, planned } from './define-routes';

/**
 * Routes of the interface whose capabilities have not landed. Each is authenticated and policed
 * like the others, answers 501 not_implemented and is documented as planned; a capability
 * moves its rows into its own `<resource>.routes.ts` with handlers when it lands.
 */
export const PLANNED_ROUTES = [
  ...defineRoutes('Sales links', [
    planned('POST', '/v1/sales-links', 'Create a sales link'),
    planned('GET', '/v1/sales-links', 'List sales links'),
    planned('GET', '/v1/sales-links/:id', 'Retrieve a sales link'),
    planned('GET', '/v1/sales-links/:id/checkouts', 'List sales made through a link'),
    planned('POST', '/v1/sales-links/:id/deactivate', 'Deactivate a sales link'),
    planned('POST', '/v1/sales-links/:id/activate', 'Activate a sales link'),
  ]),
];
