import { matchRoute, ROUTES } from '../src/routing/route-table';

describe('route table', () => {
  it('holds every route of the specification exactly once', () => {
    // Customers 5, plans 13, subscriptions 18, invoices 7, payments/refunds 3, usage 3,
    // webhooks 8, add-ons 6, coupons and promotion codes 8, sales links 6.
    expect(ROUTES).toHaveLength(77);
    const keys = ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('lets publishable keys call exactly the four plan reads', () => {
    expect(ROUTES.filter((route) => route.publishable).map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      'GET /v1/plans',
      'GET /v1/plans/:id',
      'GET /v1/plans/:id/price-components',
      'GET /v1/plans/:id/tiers',
    ]);
  });

  it('matches literal segments before parameters', () => {
    expect(matchRoute('GET', '/v1/webhooks/events').entry?.path).toBe('/v1/webhooks/events');
    expect(matchRoute('PATCH', '/v1/webhooks/we_123').entry?.path).toBe('/v1/webhooks/:id');
    expect(matchRoute('GET', '/v1/usage/alerts').entry?.path).toBe('/v1/usage/alerts');
    expect(matchRoute('POST', '/v1/webhooks/we_1/deliveries/whd_2/retry').entry?.path).toBe('/v1/webhooks/:id/deliveries/:deliveryId/retry');
  });

  it('tells an unknown path from a known path with another method', () => {
    expect(matchRoute('GET', '/v1/nothing')).toEqual({ pathExists: false });
    expect(matchRoute('PUT', '/v1/customers')).toEqual({ pathExists: true });
    expect(matchRoute('GET', '/v1/customers/cus_1/extra').entry).toBeUndefined();
  });
});
