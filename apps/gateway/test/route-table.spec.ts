import { buildOpenApiDocument, nullableObjectsAsAnyOf } from '../src/openapi/openapi';
import { matchRoute, ROUTES } from '../src/routing/route-table';

/**
 * Every METHOD + path row of the interface specification (spec/billing-interface.md), copied
 * by hand: the route table must hold exactly these, so a route missing from or added to the
 * gateway fails here. Customers 5, plans 13, subscriptions 18, invoices 7, payments/refunds 3,
 * usage 3, webhooks 8, add-ons 6, coupons and promotion codes 8, sales links 6.
 */
const SPECIFICATION = `
POST /v1/customers
GET /v1/customers
GET /v1/customers/:id
PATCH /v1/customers/:id
DELETE /v1/customers/:id
POST /v1/plans
GET /v1/plans
GET /v1/plans/:id
PATCH /v1/plans/:id
DELETE /v1/plans/:id
POST /v1/plans/:id/restore
POST /v1/plans/:id/clone
GET /v1/plans/:id/tiers
PUT /v1/plans/:id/tiers
GET /v1/plans/:id/price-components
POST /v1/plans/:id/price-components
PATCH /v1/plans/:id/price-components/:componentId
DELETE /v1/plans/:id/price-components/:componentId
POST /v1/subscriptions
GET /v1/subscriptions
GET /v1/subscriptions/:id
POST /v1/subscriptions/:id/cancel
POST /v1/subscriptions/:id/pause
POST /v1/subscriptions/:id/resume
POST /v1/subscriptions/:id/change-plan
DELETE /v1/subscriptions/:id/pending-change
POST /v1/subscriptions/:id/reactivate
POST /v1/subscriptions/:id/extend-trial
POST /v1/subscriptions/:id/billing-interval
POST /v1/subscriptions/:id/promotion-code
DELETE /v1/subscriptions/:id/promotion-code
GET /v1/subscriptions/:id/upcoming-invoice
GET /v1/subscriptions/:id/addons
POST /v1/subscriptions/:id/addons
PATCH /v1/subscriptions/:id/addons/:addonId
DELETE /v1/subscriptions/:id/addons/:addonId
POST /v1/invoices
GET /v1/invoices
GET /v1/invoices/:id
GET /v1/invoices/:id/pdf
POST /v1/invoices/:id/finalize
POST /v1/invoices/:id/void
POST /v1/invoices/:id/resend
POST /v1/payments/initiate
POST /v1/refunds
GET /v1/refunds
POST /v1/usage
GET /v1/usage
GET /v1/usage/alerts
POST /v1/webhooks
GET /v1/webhooks
GET /v1/webhooks/events
PATCH /v1/webhooks/:id
DELETE /v1/webhooks/:id
POST /v1/webhooks/:id/test
GET /v1/webhooks/:id/deliveries
POST /v1/webhooks/:id/deliveries/:deliveryId/retry
GET /v1/addons
GET /v1/addons/:id
POST /v1/addons
PATCH /v1/addons/:id
DELETE /v1/addons/:id
POST /v1/addons/:id/restore
GET /v1/coupons
POST /v1/coupons
PATCH /v1/coupons/:id
DELETE /v1/coupons/:id
GET /v1/promotion-codes
POST /v1/promotion-codes
PATCH /v1/promotion-codes/:id
DELETE /v1/promotion-codes/:id
POST /v1/sales-links
GET /v1/sales-links
GET /v1/sales-links/:id
GET /v1/sales-links/:id/checkouts
POST /v1/sales-links/:id/deactivate
POST /v1/sales-links/:id/activate
`.trim().split('\n');

/**
 * Routes beyond the specification, each asked for by an issue: sandbox test clocks (issue 10);
 * usage batches, per-period totals and limit overrides (issue 13); payment attempts, credit notes and
 * the app's dunning schedule (issue 12); prepaid wallets (issue 13: the specification names their events,
 * its route table shows none); saved payment methods for automatic collection (issue 27); the events API (issue 29).
 */
const BEYOND_SPECIFICATION = `
GET /v1/account
POST /v1/account
POST /v1/usage/batch
GET /v1/usage/summary
POST /v1/usage/limits
GET /v1/payments
GET /v1/payments/:id
GET /v1/refunds/:id
GET /v1/refunds/:id/pdf
POST /v1/test-clocks
GET /v1/test-clocks
GET /v1/test-clocks/:id
POST /v1/test-clocks/:id/advance
DELETE /v1/test-clocks/:id
POST /v1/customers/:id/portal-sessions
POST /v1/wallets
GET /v1/wallets
GET /v1/wallets/:id
PATCH /v1/wallets/:id
POST /v1/wallets/:id/top-ups
GET /v1/wallets/:id/transactions
GET /v1/dunning-schedule
PUT /v1/dunning-schedule
POST /v1/customers/:id/payment-methods
GET /v1/customers/:id/payment-methods
POST /v1/customers/:id/payment-methods/:method/default
DELETE /v1/customers/:id/payment-methods/:method
GET /v1/events
GET /v1/events/:id
POST /v1/tax-rates
GET /v1/tax-rates
GET /v1/tax-rates/:id
PATCH /v1/tax-rates/:id
GET /v1/customers/:id/balance-transactions
POST /v1/customers/:id/balance-transactions
POST /v1/credit-notes
GET /v1/credit-notes
GET /v1/credit-notes/:id
GET /v1/credit-notes/:id/pdf
`.trim().split('\n');

const keyOf = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

describe('route table', () => {
  it('holds exactly the routes of the specification and the few beyond it, each once', () => {
    expect(SPECIFICATION).toHaveLength(77);
    const keys = ROUTES.map(keyOf);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual([...SPECIFICATION, ...BEYOND_SPECIFICATION].sort());
  });

  it('lets publishable keys call exactly the four plan reads', () => {
    expect(ROUTES.filter((route) => route.publishable).map(keyOf).sort()).toEqual([
      'GET /v1/plans',
      'GET /v1/plans/:id',
      'GET /v1/plans/:id/price-components',
      'GET /v1/plans/:id/tiers',
    ]);
  });

  it('declares an answer schema (or, for a file, its media type) for every route with a handler, and bodies only where writes take them', () => {
    for (const route of ROUTES.filter((candidate) => candidate.handler)) {
      if (route.file) expect({ route: keyOf(route), response: route.response, file: route.file.contentType }).toEqual({ route: keyOf(route), response: undefined, file: expect.stringMatching(/^[a-z]+\/[a-z.+-]+$/) });
      else expect({ route: keyOf(route), response: route.response?.name }).toEqual({ route: keyOf(route), response: expect.any(String) });
      if (route.read) expect({ route: keyOf(route), body: route.body }).toEqual({ route: keyOf(route), body: undefined });
    }
  });

  it('matches literal segments before parameters, and extracts the parameters', () => {
    expect(matchRoute('GET', '/v1/webhooks/events').entry?.path).toBe('/v1/webhooks/events');
    expect(matchRoute('PATCH', '/v1/webhooks/we_123')).toMatchObject({ entry: { path: '/v1/webhooks/:id' }, params: { id: 'we_123' } });
    expect(matchRoute('GET', '/v1/usage/alerts').entry?.path).toBe('/v1/usage/alerts');
    expect(matchRoute('POST', '/v1/webhooks/we_1/deliveries/whd_2/retry')).toMatchObject({
      entry: { path: '/v1/webhooks/:id/deliveries/:deliveryId/retry' },
      params: { id: 'we_1', deliveryId: 'whd_2' },
    });
  });

  it('tells an unknown path from a known path with another method', () => {
    expect(matchRoute('GET', '/v1/nothing')).toEqual({ pathExists: false, allowed: [] });
    expect(matchRoute('PUT', '/v1/customers')).toEqual({ pathExists: true, allowed: ['POST', 'GET'] });
    expect(matchRoute('PUT', '/v1/plans/plan_1')).toEqual({ pathExists: true, allowed: ['GET', 'PATCH', 'DELETE'] });
    // The most literal route answers: DELETE /v1/webhooks/events is not DELETE /v1/webhooks/:id.
    expect(matchRoute('DELETE', '/v1/webhooks/events')).toEqual({ pathExists: true, allowed: ['GET'] });
    // HEAD is GET without the body.
    expect(matchRoute('HEAD', '/v1/customers/cus_1')).toMatchObject({ entry: { method: 'GET', path: '/v1/customers/:id' }, params: { id: 'cus_1' } });
    expect(matchRoute('GET', '/v1/customers/cus_1/extra').entry).toBeUndefined();
  });
});

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument() as {
    paths: Record<string, Record<string, { 'x-recur-availability'?: string; responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>; requestBody?: unknown }>>;
    components: { schemas: Record<string, { required?: string[] }> };
  };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`, operation })),
  );

  it('documents exactly the routes of the specification', () => {
    expect(operations.map((operation) => operation.key).sort()).toEqual([...SPECIFICATION, ...BEYOND_SPECIFICATION].sort());
  });

  it('marks as planned exactly the routes without a handler', () => {
    const planned = operations.filter(({ operation }) => operation['x-recur-availability'] === 'planned').map(({ key }) => key).sort();
    expect(planned).toEqual(ROUTES.filter((route) => !route.handler).map(keyOf).sort());
    // Every capability of the interface has landed: no route answers 501 any more.
    expect(planned).toEqual([]);
    for (const { key, operation } of operations) {
      const route = ROUTES.find((candidate) => keyOf(candidate) === key)!;
      expect({ key, planned: '501' in operation.responses }).toEqual({ key, planned: !route.handler });
    }
  });

  it("documents each implemented route's success status with the schema its handler's type is declared with", () => {
    for (const route of ROUTES.filter((candidate) => candidate.handler && candidate.file)) {
      const operation = operations.find(({ key }) => key === keyOf(route))!.operation;
      expect({ route: keyOf(route), content: operation.responses[String(route.status)]?.content }).toEqual({ route: keyOf(route), content: { [route.file!.contentType]: { schema: { type: 'string', format: 'binary' } } } });
    }
    for (const route of ROUTES.filter((candidate) => candidate.handler && !candidate.file)) {
      const operation = operations.find(({ key }) => key === keyOf(route))!.operation;
      const success = operation.responses[String(route.status)]?.content?.['application/json'].schema;
      const ref = `#/components/schemas/${route.response!.name}`;
      // A route with an alternative answer under the same status documents both (oneOf); under another status, each at its own.
      const alternativeRef = route.alternative && { $ref: `#/components/schemas/${route.alternative.response.name}` };
      const expected = alternativeRef && route.alternative!.status === route.status ? { oneOf: [{ $ref: ref }, alternativeRef] } : { $ref: ref };
      // A list answers the shared envelope with its items: allOf [ListEnvelope, {data: items}].
      const listed = route.list ? (success?.allOf as [{ $ref: string }, { properties: { data: { items: unknown } } }] | undefined) : undefined;
      if (route.list) expect({ route: keyOf(route), envelope: listed?.[0] }).toEqual({ route: keyOf(route), envelope: { $ref: '#/components/schemas/ListEnvelope' } });
      expect({ route: keyOf(route), schema: listed ? listed[1].properties.data.items : success }).toEqual({ route: keyOf(route), schema: expected });
      if (alternativeRef && route.alternative!.status !== route.status) {
        expect(operation.responses[String(route.alternative!.status)]?.content?.['application/json'].schema).toEqual(alternativeRef);
      }
      // The declared schema, as the document writes it (nullable objects as anyOf).
      expect(document.components.schemas[route.response!.name]).toEqual(nullableObjectsAsAnyOf(route.response!.schema));
      if (route.alternative) expect(document.components.schemas[route.alternative.response.name]).toEqual(nullableObjectsAsAnyOf(route.alternative.response.schema));
      if (route.body) expect(document.components.schemas[route.body.name]).toBeDefined();
    }
    expect(document.components.schemas.CreateCustomerDto.required).toEqual(expect.arrayContaining(['name', 'email']));
  });
});
