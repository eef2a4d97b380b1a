import { api, eventually, type Keys, type Mesh, sleep, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Customers end to end, as an integrator sees them: through the gateway over HTTP,
 * with every app in its own process and events through Kafka.
 */
let mesh: Mesh;
let keys: Keys;
let accountId: string;

beforeAll(async () => {
  mesh = await startMesh();
  ({ accountId, keys } = await mesh.createAccount());
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

async function eventsOf(livemode: boolean, type?: string) {
  const { events } = await mesh.webhookDispatch.listEvents({ tenant: { accountId, livemode }, page: { limit: 100 }, type });
  return events.map((event) => ({ id: event.id, type: event.type, created: Number(event.created), livemode: event.livemode, data: JSON.parse(event.dataJson) }));
}

describe('customers through the gateway', () => {
  it('create, list, retrieve, update and soft-delete with a test key', async () => {
    const call = api(mesh, keys.test);
    const created = await call('POST', '/v1/customers', { name: 'Ada Lovelace', email: 'ada@example.com', metadata: { crm: '42' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('request-id')).toMatch(/^req_/);
    expect(created.body).toMatchObject({ object: 'customer', name: 'Ada Lovelace', email: 'ada@example.com', metadata: { crm: '42' }, livemode: false, deleted: false, deleted_at: null });
    const id = created.body.id;

    const listed = await call('GET', '/v1/customers?limit=10&offset=0');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ object: 'list', url: '/v1/customers', limit: 10, offset: 0 });
    expect(listed.body.data.map((c: { id: string }) => c.id)).toContain(id);
    expect(listed.body.total).toBeGreaterThanOrEqual(1);

    expect((await call('GET', `/v1/customers/${id}`)).body).toEqual(created.body);

    const updated = await call('PATCH', `/v1/customers/${id}`, { email: 'ada@lovelace.org' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, name: 'Ada Lovelace', email: 'ada@lovelace.org' });

    const deleted = await call('DELETE', `/v1/customers/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id, deleted: true });
    expect(deleted.body.deleted_at).toEqual(expect.any(Number));

    // Documented: a deleted customer stays retrievable (deleted: true) but leaves lists.
    expect((await call('GET', `/v1/customers/${id}`)).body).toMatchObject({ id, deleted: true });
    expect((await call('GET', '/v1/customers?limit=100')).body.data.map((c: { id: string }) => c.id)).not.toContain(id);
    const again = await call('PATCH', `/v1/customers/${id}`, { name: 'x' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('customer_deleted');

    // The three events arrive through Kafka, once each, with the spec's envelope.
    const events = await eventually(async () => {
      const found = (await eventsOf(false)).filter((event) => event.data.object.id === id);
      return found.length === 3 ? found : undefined;
    }, 30_000, 'three customer events');
    expect(events.map((event) => event.type).sort()).toEqual(['customer.created', 'customer.deleted', 'customer.updated']);
    for (const event of events) {
      expect(event.id).toMatch(/^evt_/);
      expect(event.livemode).toBe(false);
      expect(Number.isInteger(event.created)).toBe(true);
    }
    expect(events.find((event) => event.type === 'customer.updated')!.data.previous_attributes).toEqual({ email: 'ada@example.com' });
  });

  it('answers bad input with the documented error and changes nothing', async () => {
    const call = api(mesh, keys.test);
    const before = (await call('GET', '/v1/customers?limit=1')).body.total;
    const cases: [unknown, number, string, string?][] = [
      [{ name: 'Ada' }, 400, 'parameter_missing', 'email'],
      [{ name: 'Ada', email: 'not-an-email' }, 400, 'parameter_invalid', 'email'],
      [{ name: 42, email: 'a@b.co' }, 400, 'parameter_invalid', 'name'],
      [{ name: 'Ada', email: 'a@b.co', plan: 'gold' }, 400, 'parameter_unknown', 'plan'],
      [{ name: 'Ada', email: 'a@b.co', metadata: { k: 5 } }, 400, 'parameter_invalid', 'metadata'],
      ['{"name": "Ada",', 400, 'invalid_json'],
    ];
    for (const [body, status, code, param] of cases) {
      const response = await call('POST', '/v1/customers', body);
      expect({ status: response.status, code: response.body.error.code, param: response.body.error.param }).toEqual({ status, code, param });
      expect(response.body.error.type).toBe('invalid_request_error');
      expect(response.body.error.request_id).toBe(response.headers.get('request-id'));
      expect(response.body.error.message).toEqual(expect.any(String));
    }
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1', 'offset=10001']) {
      const response = await call('GET', `/v1/customers?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error.param).toBe(query.split('=')[0]);
    }
    const missing = await call('GET', '/v1/customers/cus_doesnotexist');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect((await call('GET', '/v1/customers?limit=1')).body.total).toBe(before);
  });

  it('answers a JSON body sent as another media type, or none, with 415 naming the type it got, and stores nothing', async () => {
    const json = JSON.stringify({ name: 'Ada', email: 'ada@example.com' });
    const before = (await api(mesh, keys.test)('GET', '/v1/customers?limit=1')).body.total;
    const cases: [string, Record<string, string>, string | Uint8Array, string][] = [
      // curl -d without -H 'content-type: application/json'
      ['curl’s default', { 'content-type': 'application/x-www-form-urlencoded' }, json, 'application/x-www-form-urlencoded'],
      ['text', { 'content-type': 'text/plain; charset=utf-8' }, json, 'text/plain'],
      // bytes: fetch adds no Content-Type
      ['none', {}, new TextEncoder().encode(json), 'missing'],
    ];
    for (const [label, headers, body, named] of cases) {
      const response = await fetch(`${mesh.baseUrl}/v1/customers`, { method: 'POST', headers: { 'x-api-key': keys.test, ...headers }, body });
      const answer = (await response.json()) as { error: { type: string; code: string; message: string; request_id: string } };
      expect({ label, status: response.status, type: answer.error.type, code: answer.error.code }).toEqual({ label, status: 415, type: 'invalid_request_error', code: 'unsupported_media_type' });
      expect(answer.error.message).toBe(`Send the request body as JSON with the header Content-Type: application/json (this request's Content-Type is ${named}).`);
      expect(answer.error.request_id).toBe(response.headers.get('request-id'));
    }
    // A POST without a body needs no Content-Type.
    const customer = (await api(mesh, keys.test)('POST', '/v1/customers', { name: 'Ada', email: 'ada@example.com' })).body;
    const session = await fetch(`${mesh.baseUrl}/v1/customers/${customer.id}/portal-sessions`, { method: 'POST', headers: { 'x-api-key': keys.test } });
    expect(session.status).toBe(201);
    expect((await api(mesh, keys.test)('GET', '/v1/customers?limit=1')).body.total).toBe(before + 1);
  });

  it('answers missing, unknown and revoked keys with 401', async () => {
    expect((await api(mesh, undefined)('GET', '/v1/customers')).body.error).toMatchObject({ code: 'api_key_missing', type: 'authentication_error' });
    expect((await api(mesh, 'recur_test_sk_nope')('GET', '/v1/customers')).status).toBe(401);
    expect((await api(mesh, `recur_test_sk_${'A'.repeat(32)}`)('GET', '/v1/customers')).status).toBe(401);

    const { body: key } = await mesh.operator('POST', `/operator/accounts/${accountId}/keys`, { app: 'sandbox', type: 'test' });
    expect((await api(mesh, key.secret)('GET', '/v1/customers')).status).toBe(200);
    const { body: rolled } = await mesh.operator('POST', `/operator/keys/${key.id}/roll`, {});
    expect((await api(mesh, key.secret)('GET', '/v1/customers')).status).toBe(401);
    expect((await api(mesh, rolled.secret)('GET', '/v1/customers')).status).toBe(200);
    await mesh.operator('POST', `/operator/keys/${rolled.id}/revoke`);
    expect((await api(mesh, rolled.secret)('GET', '/v1/customers')).body.error.code).toBe('api_key_invalid');
  });

  it('keeps a rolled key working through its grace period, then answers 401 api_key_invalid; the new key works throughout', async () => {
    const { body: key } = await mesh.operator('POST', `/operator/accounts/${accountId}/keys`, { app: 'sandbox', type: 'test' });
    const rolledAt = Date.now();
    const rolled = await mesh.operator('POST', `/operator/keys/${key.id}/roll`, { expires_in_seconds: 2 });
    expect(rolled.status).toBe(201);
    expect((await api(mesh, key.secret)('GET', '/v1/customers')).status).toBe(200);
    expect((await api(mesh, rolled.body.secret)('GET', '/v1/customers')).status).toBe(200);
    expect(rolled.body.secret).not.toBe(key.secret);
    const listed = await mesh.operator('GET', `/operator/accounts/${accountId}/keys`);
    const expiresAt = listed.body.data.find((listedKey: { id: string }) => listedKey.id === key.id).expires_at;
    expect(Math.abs(expiresAt - (rolledAt / 1000 + 2))).toBeLessThanOrEqual(2);
    await sleep(Math.max(0, rolledAt + 3_000 - Date.now()));
    const expired = await api(mesh, key.secret)('GET', '/v1/customers');
    expect({ status: expired.status, code: expired.body.error.code }).toEqual({ status: 401, code: 'api_key_invalid' });
    expect((await api(mesh, rolled.body.secret)('GET', '/v1/customers')).status).toBe(200);
    // The grace period is at most 7 days.
    expect((await mesh.operator('POST', `/operator/keys/${rolled.body.id}/roll`, { expires_in_seconds: 604_801 })).status).toBe(400);
  });

  it('creates keys only on their own side (key_mode_mismatch), publishable on either', async () => {
    const live = await mesh.operator('POST', `/operator/accounts/${accountId}/keys`, { app: 'sandbox', type: 'live' });
    expect(live.status).toBe(400);
    expect(live.body.error.code).toBe('key_mode_mismatch');
    const test = await mesh.operator('POST', `/operator/accounts/${accountId}/keys`, { app: 'live', type: 'test' });
    expect(test.status).toBe(400);
    expect(test.body.error.code).toBe('key_mode_mismatch');
    for (const app of ['sandbox', 'live']) {
      const publishable = await mesh.operator('POST', `/operator/accounts/${accountId}/keys`, { app, type: 'publishable' });
      expect(publishable.status).toBe(201);
      expect(publishable.body.secret).toMatch(/^recur_publishable_sk_/);
    }
    const listed = await mesh.operator('GET', `/operator/accounts/${accountId}/keys`);
    expect(JSON.stringify(listed.body)).not.toMatch(/recur_(test|live|publishable)_sk_[0-9A-Za-z]{32}/);
    // Keys used in earlier tests show when they were last used.
    expect(listed.body.data.some((key: { last_used_at: number | null }) => typeof key.last_used_at === 'number')).toBe(true);
    const unauthorised = await fetch(`${mesh.adminUrl}/operator/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' }, body: '{"name":"x"}' });
    expect(unauthorised.status).toBe(401);
  });

  it('keeps apps and accounts apart: 404, never the data', async () => {
    const { body: sandboxCustomer } = await api(mesh, keys.test)('POST', '/v1/customers', { name: 'Sandbox only', email: 'sb@example.com' });
    const other = await mesh.createAccount('Other account');
    for (const key of [keys.live, keys.liveReadOnly, other.keys.test, other.keys.live]) {
      const call = api(mesh, key);
      const retrieved = await call('GET', `/v1/customers/${sandboxCustomer.id}`);
      expect(retrieved.status).toBe(404);
      expect(JSON.stringify(retrieved.body)).not.toContain('sb@example.com');
      expect((await call('PATCH', `/v1/customers/${sandboxCustomer.id}`, { name: 'x' })).status).toBe(key === keys.liveReadOnly ? 403 : 404);
      const listed = await call('GET', '/v1/customers?limit=100');
      expect(listed.body.data.map((c: { id: string }) => c.id)).not.toContain(sandboxCustomer.id);
    }
    const { body: liveCustomer } = await api(mesh, keys.live)('POST', '/v1/customers', { name: 'Live', email: 'live@example.com' });
    expect(liveCustomer.livemode).toBe(true);
    expect((await api(mesh, keys.test)('GET', `/v1/customers/${liveCustomer.id}`)).status).toBe(404);
    // Live events carry livemode true and stay with the live app.
    const liveEvents = await eventually(async () => {
      const found = (await eventsOf(true)).filter((event) => event.data.object.id === liveCustomer.id);
      return found.length === 1 ? found : undefined;
    }, 30_000, 'live customer.created');
    expect(liveEvents[0]).toMatchObject({ type: 'customer.created', livemode: true });
    expect((await eventsOf(false)).some((event) => event.data.object.id === liveCustomer.id)).toBe(false);
  });

  it('replays a POST with the same Idempotency-Key and body, and refuses another body', async () => {
    const call = api(mesh, keys.test);
    const key = `idem-${Date.now()}`;
    const first = await call('POST', '/v1/customers', { name: 'Idem', email: 'idem@example.com' }, { 'Idempotency-Key': key });
    const second = await call('POST', '/v1/customers', { email: 'idem@example.com', name: 'Idem' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const conflicting = await call('POST', '/v1/customers', { name: 'Other', email: 'idem@example.com' }, { 'Idempotency-Key': key });
    expect(conflicting.status).toBe(409);
    expect(conflicting.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    // Keys are per app: the same key on the live app is a different request.
    const live = await api(mesh, keys.live)('POST', '/v1/customers', { name: 'Idem', email: 'idem@example.com' }, { 'Idempotency-Key': key });
    expect(live.status).toBe(201);
    expect(live.body.id).not.toBe(first.body.id);
    const created = await eventually(async () => {
      const found = (await eventsOf(false, 'customer.created')).filter((event) => event.data.object.id === first.body.id);
      return found.length > 0 ? found : undefined;
    }, 30_000, 'customer.created of the idempotent create');
    expect(created).toHaveLength(1);
  });

  it('answers unknown routes 404 route_not_found, wrong methods 405 method_not_allowed and big bodies 413 payload_too_large', async () => {
    const call = api(mesh, keys.test);
    const cases: [string, string, unknown, number, string][] = [
      ['GET', '/v1/nothing-here', undefined, 404, 'route_not_found'],
      ['PUT', '/v1/customers', {}, 405, 'method_not_allowed'],
      ['POST', '/v1/customers', { name: 'Big', email: 'big@example.com', metadata: { blob: 'x'.repeat(300 * 1024) } }, 413, 'payload_too_large'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const response = await call(method, path, body);
      expect({ method, path, status: response.status, code: response.body?.error?.code }).toEqual({ method, path, status, code });
      expect(response.body.error.request_id).toBe(response.headers.get('request-id'));
    }
  });

  it('refuses webhook URLs on non-public addresses (url_not_public) when private URLs are not allowed', async () => {
    const call = api(mesh, keys.test);
    for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://localhost/hook', 'http://169.254.169.254/latest']) {
      const response = await call('POST', '/v1/webhooks', { url, events: ['customer.created'] });
      expect({ url, status: response.status, code: response.body.error?.code, param: response.body.error?.param }).toEqual({ url, status: 400, code: 'url_not_public', param: 'url' });
    }
    const listed = await call('GET', '/v1/webhooks');
    expect(listed.body.data).toEqual([]);
    expect((await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/recur', events: ['customer.created'] })).status).toBe(201);
  });

  it('serves the OpenAPI document with every route of the specification', async () => {
    const response = await fetch(`${mesh.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as any;
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    // The specification's 77 routes, the five test-clock routes of issue 10, the customer portal sessions of issue 14,
    // usage batches, totals and limits of issue 13, the payment list and retrieve, credit note retrieve and PDF and the
    // app's dunning schedule (GET and PUT) of issue 12, the six prepaid wallet routes of issue 13, the four
    // payment-method routes of issue 27, the two events routes of issue 29, the four tax-rate routes and the two account routes of issue 28.
    expect(operations).toHaveLength(116);
    expect(operations).toEqual(expect.arrayContaining(['POST /v1/customers/{id}/payment-methods', 'DELETE /v1/customers/{id}/payment-methods/{method}', 'GET /v1/events', 'GET /v1/events/{id}']));
    expect(operations).toContain('POST /v1/customers/{id}/portal-sessions');
    expect(operations).toContain('POST /v1/customers');
    expect(operations).toContain('POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry');
    expect(document.components.schemas.CreateCustomerDto.required).toEqual(expect.arrayContaining(['name', 'email']));
  });
});

describe('key policy on every route of the specification', () => {
  // The gateway's route table is pinned to the specification by its own unit test.
  const { ROUTES } = require('../../../apps/gateway/src/routing/route-table') as typeof import('../../../apps/gateway/src/routing/route-table');
  const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_m, name: string) => `${name}_0000`);
  const bodyFor = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});

  it('lets publishable keys (sandbox and live) call only the four plan reads', async () => {
    for (const key of [keys.sandboxPublishable, keys.livePublishable]) {
      const call = api(mesh, key);
      for (const route of ROUTES) {
        const response = await call(route.method, concrete(route.path), bodyFor(route.method));
        if (route.publishable) expect({ route: route.path, status: response.status }).not.toEqual({ route: route.path, status: 403 });
        else expect({ route: `${route.method} ${route.path}`, status: response.status, code: response.body?.error?.code }).toEqual({ route: `${route.method} ${route.path}`, status: 403, code: 'publishable_key_forbidden' });
      }
    }
  });

  it('lets read_only keys (sandbox and live) read but never write', async () => {
    for (const key of [keys.testReadOnly, keys.liveReadOnly]) {
      const call = api(mesh, key);
      for (const route of ROUTES) {
        const response = await call(route.method, concrete(route.path), bodyFor(route.method));
        const seen = { route: `${route.method} ${route.path}`, status: response.status, code: response.body?.error?.code };
        if (route.read) expect(seen.status).not.toBe(403);
        else expect(seen).toEqual({ route: seen.route, status: 403, code: 'api_key_read_only' });
      }
    }
  });

  it('lets secret keys reach every route, each implemented: none answers 401, 403 or 501', async () => {
    const call = api(mesh, keys.test);
    expect(ROUTES.filter((route) => !route.handler).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    for (const route of ROUTES) {
      const response = await call(route.method, concrete(route.path), bodyFor(route.method));
      const seen = { route: `${route.method} ${route.path}`, status: response.status, code: response.body?.error?.code };
      expect({ route: seen.route, refused: [401, 403, 501].includes(seen.status) }).toEqual({ route: seen.route, refused: false });
    }
  });
});
