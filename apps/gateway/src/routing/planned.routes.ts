import { defineRoutes, planned } from './define-routes';

/**
 * Routes of the interface whose capabilities have not landed. Each is authenticated and policed
 * like the others, answers 501 not_implemented and is documented as planned; a capability
 * moves its rows into its own `<resource>.routes.ts` with handlers when it lands.
 */
export const PLANNED_ROUTES = [
  ...defineRoutes('Refunds', [
    planned('POST', '/v1/refunds', 'Fully refund a paid invoice'),
    planned('GET', '/v1/refunds', 'List credit notes'),
  ]),
];
