import { request as httpRequest } from 'node:http';
import { api, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * The gateway's door (issue: fuzz-clean): every bad input is a 4xx in the error shape and
 * changes nothing, and no stored value can break a later read. One test per defect found by
 * fuzzing, through the real mesh.
 */
let mesh: Mesh;
let keys: Keys;
let call: ReturnType<typeof api>;

meshForFile('Door', (started) => ({ mesh, keys, call } = started));

/** A raw HTTP exchange, for what fetch will not send (repeated headers, HEAD bodies). */
function raw(method: string, path: string, headers: [string, string][], body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(path, mesh.baseUrl);
  return new Promise((resolve, reject) => {
    const all: [string, string][] = [['host', url.host], ...headers];
    const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: all.flat() as unknown as Record<string, string> }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const customerCount = async () => (await call('GET', '/v1/customers?limit=1')).body.total as number;

describe('the door', () => {
  it('refuses U+0000 in a body string, a body key or a query value with 400, and answers 404 for a path id that cannot exist', async () => {
    const before = await customerCount();
    for (const body of [{ name: 'Nul\u0000', email: 'nul@example.com' }, { name: 'Nul', email: 'nul@example.com', metadata: { 'k\u0000': 'v' } }]) {
      const response = await call('POST', '/v1/customers', body);
      expect({ status: response.status, code: response.body.error.code }).toEqual({ status: 400, code: 'parameter_invalid' });
    }
    const query = await call('GET', '/v1/customers?email=a%00b');
    expect({ status: query.status, code: query.body.error.code, param: query.body.error.param }).toEqual({ status: 400, code: 'parameter_invalid', param: 'email' });
    for (const path of ['/v1/customers/cus_%00', '/v1/plans/plan%20x', '/v1/webhooks/%E2%82%AC/deliveries']) {
      const response = await call('GET', path);
      expect({ path, status: response.status, code: response.body.error.code }).toEqual({ path, status: 404, code: 'resource_missing' });
    }
    expect(await customerCount()).toBe(before);
  });

  it('refuses JSON nested deeper than 32 levels with 400, at any depth up to the body limit', async () => {
    for (const depth of [33, 1_300, 100_000]) {
      const response = await call('POST', '/v1/customers', `{"name":"Deep","email":"deep@example.com","metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`);
      expect({ depth, status: response.status, type: response.body.error.type }).toEqual({ depth, status: 400, type: 'invalid_request_error' });
    }
  });

  it('bounds every timestamp: a promotion code expiring after 9999 is refused, so no list can be poisoned', async () => {
    const coupon = await call('POST', '/v1/coupons', { name: 'Door', type: 'percentage', value: 10, duration: 'once' });
    for (const expires_at of [8_640_000_000_000, 253_402_300_800, 1e300]) {
      const response = await call('POST', '/v1/promotion-codes', { code: `DOOR${String(expires_at).length}`, coupon: coupon.body.id, expires_at });
      expect({ expires_at, status: response.status, param: response.body.error.param }).toEqual({ expires_at, status: 400, param: 'expires_at' });
    }
    const latest = await call('POST', '/v1/promotion-codes', { code: 'DOORMAX', coupon: coupon.body.id, expires_at: 253_402_300_799 });
    expect(latest.status).toBe(201);
    expect((await call('GET', '/v1/promotion-codes')).status).toBe(200);
    expect((await api(mesh, keys.testReadOnly)('GET', '/v1/promotion-codes')).status).toBe(200);
    expect((await call('DELETE', `/v1/promotion-codes/${latest.body.id}`)).status).toBe(200);
  });

  it('takes percentages from 0.01 to 100 in hundredths: 5e-324 and 0.001 alike are refused', async () => {
    for (const value of [5e-324, 0.001, 0.005, 100.01]) {
      const response = await call('POST', '/v1/coupons', { name: 'Tiny', type: 'percentage', value, duration: 'once' });
      expect({ value, status: response.status, param: response.body.error.param }).toEqual({ value, status: 400, param: 'value' });
    }
    expect((await call('POST', '/v1/coupons', { name: 'Smallest', type: 'percentage', value: 0.01, duration: 'once' })).status).toBe(201);
  });

  it('reads limit and offset as plain decimal integers only: empty, hex, exponent and signed values are a 400', async () => {
    for (const query of ['offset=', 'limit=', 'limit=0x10', 'limit=1e2', 'limit=+5', 'offset=-0', 'limit=%205']) {
      const response = await call('GET', `/v1/customers?${query}`);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
    expect((await call('GET', '/v1/customers?limit=5&offset=0')).body).toMatchObject({ limit: 5, offset: 0 });
  });

  it('refuses null for a field that is not nullable, and takes it where null clears a value', async () => {
    const refused = await call('POST', '/v1/addons', { name: 'Null', price_monthly: 100, currency: null });
    expect({ status: refused.status, param: refused.body.error.param }).toEqual({ status: 400, param: 'currency' });
    const addon = await call('POST', '/v1/addons', { name: 'Null', price_monthly: 100, description: 'clear me' });
    const cleared = await call('PATCH', `/v1/addons/${addon.body.id}`, { description: null });
    expect({ status: cleared.status, description: cleared.body.description }).toEqual({ status: 200, description: null });
  });

  it('answers 405 with an Allow header naming the path’s methods, and HEAD like GET without a body', async () => {
    const put = await raw('PUT', '/v1/customers', [['x-api-key', keys.test]]);
    expect({ status: put.status, allow: put.headers.allow }).toEqual({ status: 405, allow: 'POST, GET' });
    const events = await raw('DELETE', '/v1/webhooks/events', [['x-api-key', keys.test]]);
    expect({ status: events.status, allow: events.headers.allow }).toEqual({ status: 405, allow: 'GET' });
    const head = await raw('HEAD', '/v1/customers', [['x-api-key', keys.test]]);
    expect({ status: head.status, text: head.text, type: head.headers['content-type'] }).toEqual({ status: 200, text: '', type: expect.stringContaining('application/json') });
  });

  it('keeps nothing under an Idempotency-Key for a request refused as invalid, so the corrected one may reuse it', async () => {
    const key = `door-${Date.now()}`;
    const invalid = await call('POST', '/v1/customers', { name: 'Fix me', email: 'not an address' }, { 'Idempotency-Key': key });
    expect(invalid.status).toBe(400);
    const fixed = await call('POST', '/v1/customers', { name: 'Fix me', email: 'fixed@example.com' }, { 'Idempotency-Key': key });
    expect({ status: fixed.status, email: fixed.body.email }).toEqual({ status: 201, email: 'fixed@example.com' });
    const replay = await call('POST', '/v1/customers', { name: 'Fix me', email: 'fixed@example.com' }, { 'Idempotency-Key': key });
    expect({ status: replay.status, id: replay.body.id, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ status: 201, id: fixed.body.id, replayed: 'true' });
  });

  it('refuses two Idempotency-Key headers, and a key that is not visible ASCII, with 400 and creates nothing', async () => {
    const before = await customerCount();
    const body = JSON.stringify({ name: 'Twice', email: 'twice@example.com' });
    const twice = await raw('POST', '/v1/customers', [['x-api-key', keys.test], ['content-type', 'application/json'], ['idempotency-key', 'a'], ['idempotency-key', 'b']], body);
    expect({ status: twice.status, code: JSON.parse(twice.text).error.code }).toEqual({ status: 400, code: 'idempotency_key_invalid' });
    const spaced = await call('POST', '/v1/customers', JSON.parse(body), { 'Idempotency-Key': 'has space' });
    expect({ status: spaced.status, code: spaced.body.error.code }).toEqual({ status: 400, code: 'idempotency_key_invalid' });
    expect(await customerCount()).toBe(before);
  });
});
