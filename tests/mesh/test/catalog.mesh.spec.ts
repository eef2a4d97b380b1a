import { api, type Keys, type Mesh, meshForFile } from './mesh';

/**
 * The catalog end to end, as an integrator sees it: through the gateway over HTTP, with
 * every app in its own process. Plans of every pricing model, tiers, price components,
 * add-ons, coupons and promotion codes; key policy; errors; app isolation.
 */
let mesh: Mesh;
let keys: Keys;

meshForFile('Catalog mesh', (started) => ({ mesh, keys } = started));

const TIERS = [{ up_to: 10, unit_amount: 500, flat_amount: 0 }, { up_to: null, unit_amount: 400 }];

describe('catalog through the gateway', () => {
  const plans: Record<string, string> = {};

  it('builds a catalog with each pricing model, tiers and price components', async () => {
    const call = api(mesh, keys.test);
    for (const pricing_model of ['flat_rate', 'per_unit', 'package', 'graduated', 'volume']) {
      const body = { name: `Plan ${pricing_model}`, pricing_model, amount_monthly: 2_900, ...(pricing_model === 'package' ? { package_size: 100 } : {}) };
      const created = await call('POST', '/v1/plans', body);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        object: 'plan', livemode: false, name: body.name, pricing_model, amount_monthly: 2_900, currency: 'usd', status: 'active',
        billing_intervals: ['monthly', 'quarterly', 'yearly'], description: null, archived_at: null, metadata: {},
      });
      expect(created.body.id).toMatch(/^plan_/);
      expect(Number.isInteger(created.body.created)).toBe(true);
      plans[pricing_model] = created.body.id;
    }
    for (const model of ['graduated', 'volume']) {
      const put = await call('PUT', `/v1/plans/${plans[model]}/tiers`, { tiers: TIERS });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ object: 'plan_tiers', plan: plans[model], tiers: [{ up_to: 10, unit_amount: 500, flat_amount: 0 }, { up_to: null, unit_amount: 400, flat_amount: 0 }] });
    }
    const metered = await call('POST', `/v1/plans/${plans.per_unit}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 1000 });
    expect(metered.status).toBe(201);
    expect(metered.body).toMatchObject({ object: 'price_component', plan: plans.per_unit, type: 'metered', metric_name: 'api_calls', unit_amount: 2, included_quantity: 1000 });
    const fixed = await call('POST', `/v1/plans/${plans.per_unit}/price-components`, { type: 'fixed', name: 'Support', unit_amount: 990 });
    expect(fixed.body).toMatchObject({ type: 'fixed', metric_name: null, included_quantity: 0 });
    const patched = await call('PATCH', `/v1/plans/${plans.per_unit}/price-components/${fixed.body.id}`, { unit_amount: 1_490 });
    expect(patched.body.unit_amount).toBe(1_490);
    const listed = await call('GET', `/v1/plans/${plans.per_unit}/price-components`);
    expect(listed.body).toMatchObject({ object: 'list', total: 2, has_more: false });
    expect((await call('DELETE', `/v1/plans/${plans.per_unit}/price-components/${fixed.body.id}`)).status).toBe(200);
    expect((await call('GET', `/v1/plans/${plans.per_unit}/price-components`)).body.total).toBe(1);
  });

  it('reads the catalog back with a publishable key; everything else is forbidden to it', async () => {
    const publishable = api(mesh, keys.sandboxPublishable);
    expect((await publishable('GET', '/v1/plans')).body.data.map((plan: { id: string }) => plan.id)).toEqual(expect.arrayContaining(Object.values(plans)));
    expect((await publishable('GET', `/v1/plans/${plans.graduated}`)).body).toMatchObject({ id: plans.graduated, pricing_model: 'graduated' });
    expect((await publishable('GET', `/v1/plans/${plans.graduated}/tiers`)).body.tiers).toHaveLength(2);
    expect((await publishable('GET', `/v1/plans/${plans.per_unit}/price-components`)).body.data).toHaveLength(1);
    for (const [method, path] of [
      ['POST', '/v1/plans'], ['PATCH', `/v1/plans/${plans.flat_rate}`], ['DELETE', `/v1/plans/${plans.flat_rate}`], ['PUT', `/v1/plans/${plans.volume}/tiers`],
      ['GET', '/v1/addons'], ['GET', '/v1/coupons'], ['GET', '/v1/promotion-codes'], ['POST', `/v1/plans/${plans.flat_rate}/clone`],
    ]) {
      const response = await publishable(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect({ method, path, status: response.status, code: response.body.error.code }).toEqual({ method, path, status: 403, code: 'publishable_key_forbidden' });
    }
  });

  it('answers a browser preflight from any origin on the routes a publishable key may call, and only there', async () => {
    const preflight = async (path: string, method: string, origin: string) => {
      const response = await fetch(`${mesh.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key' },
      });
      await response.text();
      return { path, method, status: response.status, allowOrigin: response.headers.get('access-control-allow-origin'), allowHeaders: response.headers.get('access-control-allow-headers') };
    };
    for (const [path, origin] of [
      ['/v1/plans', 'https://shop.example'], [`/v1/plans/${plans.graduated}`, 'http://localhost:3000'],
      [`/v1/plans/${plans.graduated}/tiers`, 'https://a.example'], [`/v1/plans/${plans.per_unit}/price-components`, 'null'],
    ]) {
      expect(await preflight(path, 'GET', origin)).toEqual({ path, method: 'GET', status: 204, allowOrigin: '*', allowHeaders: 'x-api-key' });
    }
    // Writes, and every route a publishable key may not call: no CORS header, so the browser refuses.
    for (const [path, method] of [['/v1/plans', 'POST'], [`/v1/plans/${plans.flat_rate}`, 'DELETE'], ['/v1/customers', 'GET'], ['/v1/customers', 'POST'], ['/v1/coupons', 'GET'], ['/v1/nowhere', 'GET']]) {
      const answer = await preflight(path, method, 'https://shop.example');
      expect({ path, method, allowOrigin: answer.allowOrigin, succeeded: answer.status === 204 }).toEqual({ path, method, allowOrigin: null, succeeded: false });
    }
    // The call itself, from a page: readable (Access-Control-Allow-Origin) on a plan read, not elsewhere.
    const fromPage = async (path: string, key: string) =>
      (await fetch(`${mesh.baseUrl}${path}`, { headers: { origin: 'https://shop.example', 'x-api-key': key } })).headers.get('access-control-allow-origin');
    expect(await fromPage('/v1/plans', keys.sandboxPublishable)).toBe('*');
    expect(await fromPage('/v1/customers', keys.test)).toBeNull();
  });

  it('refuses writes with a read-only key and lets it read', async () => {
    const readOnly = api(mesh, keys.testReadOnly);
    expect((await readOnly('GET', `/v1/plans/${plans.flat_rate}`)).status).toBe(200);
    expect((await readOnly('GET', '/v1/addons')).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: 1 }],
      ['PUT', `/v1/plans/${plans.volume}/tiers`, { tiers: TIERS }],
      ['POST', '/v1/addons', { name: 'x', price_monthly: 1 }],
      ['POST', '/v1/coupons', { name: 'x', type: 'percentage', value: 10, duration: 'once' }],
      ['DELETE', `/v1/plans/${plans.flat_rate}`, undefined],
    ] as const) {
      const response = await readOnly(method, path, body);
      expect({ path, status: response.status, code: response.body.error.code }).toEqual({ path, status: 403, code: 'api_key_read_only' });
    }
  });

  it('answers malformed bodies with 400 and the offending param, changing nothing', async () => {
    const call = api(mesh, keys.test);
    const before = (await call('GET', '/v1/plans?limit=1')).body.total;
    const cases: [string, string, unknown, string, string][] = [
      ['POST', '/v1/plans', { name: 'x', amount_monthly: 1 }, 'parameter_missing', 'pricing_model'],
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'tiered', amount_monthly: 1 }, 'parameter_invalid', 'pricing_model'],
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: -5 }, 'parameter_invalid', 'amount_monthly'],
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: '5' }, 'parameter_invalid', 'amount_monthly'],
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: 5, currency: 'dollars' }, 'parameter_invalid', 'currency'],
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: 5, color: 'red' }, 'parameter_unknown', 'color'],
      // The catalog's value sets are the catalog's to check: its INVALID_ARGUMENT is the 400, with the item's param.
      ['POST', '/v1/plans', { name: 'x', pricing_model: 'flat_rate', amount_monthly: 5, billing_intervals: ['weekly'] }, 'parameter_invalid', 'billing_intervals[0]'],
      ['PATCH', `/v1/plans/${plans.flat_rate}`, { pricing_model: 'stairstep' }, 'parameter_invalid', 'pricing_model'],
      ['POST', `/v1/plans/${plans.flat_rate}/price-components`, { type: 'seat_based', name: 'x', unit_amount: 1 }, 'parameter_invalid', 'type'],
      ['POST', '/v1/coupons', { name: 'x', type: 'percentage', value: 10, duration: 'twice' }, 'parameter_invalid', 'duration'],
      ['PUT', `/v1/plans/${plans.volume}/tiers`, { tiers: [{ up_to: 10, unit_amount: 500 }, { up_to: 5, unit_amount: 400 }, { up_to: null, unit_amount: 1 }] }, 'parameter_invalid', 'tiers[1].up_to'],
      ['PUT', `/v1/plans/${plans.volume}/tiers`, { tiers: [{ up_to: 10, unit_amount: 500 }, { up_to: null, unit_amount: -1 }] }, 'parameter_invalid', 'tiers[1].unit_amount'],
      ['PUT', `/v1/plans/${plans.volume}/tiers`, { tiers: [{ up_to: 10, unit_amount: 500 }, { up_to: 20, unit_amount: 1 }] }, 'parameter_invalid', 'tiers[1].up_to'],
      ['PUT', `/v1/plans/${plans.volume}/tiers`, { tiers: [{ up_to: null, unit_amount: 1, extra: 1 }] }, 'parameter_unknown', 'tiers[0].extra'],
      ['POST', `/v1/plans/${plans.flat_rate}/price-components`, { type: 'metered', name: 'x', unit_amount: 1 }, 'parameter_invalid', 'metric_name'],
      ['POST', '/v1/addons', { name: 'x', price_monthly: 1.5 }, 'parameter_invalid', 'price_monthly'],
      ['POST', '/v1/coupons', { name: 'x', type: 'percentage', value: 120, duration: 'once' }, 'parameter_invalid', 'value'],
      ['POST', '/v1/coupons', { name: 'x', type: 'percentage', value: 10, duration: 'repeating' }, 'parameter_missing', 'duration_in_periods'],
      ['POST', '/v1/coupons', { name: 'x', type: 'fixed_amount', value: 500, duration: 'once' }, 'parameter_missing', 'currency'],
      ['POST', '/v1/coupons', { name: 'x', type: 'bogus', value: 10, duration: 'once' }, 'parameter_invalid', 'type'],
    ];
    for (const [method, path, body, code, param] of cases) {
      const response = await call(method, path, body);
      expect({ path, body, status: response.status, code: response.body.error.code, param: response.body.error.param }).toEqual({ path, body, status: 400, code, param });
    }
    expect((await call('GET', '/v1/plans?limit=1')).body.total).toBe(before);
    expect((await call('GET', `/v1/plans/${plans.volume}/tiers`)).body.tiers).toHaveLength(2);
    expect((await call('GET', '/v1/plans?status=deleted')).body.error.param).toBe('status');
    const missing = await call('GET', '/v1/plans/plan_doesnotexist');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
  });

  it('archives, restores and clones plans; archived plans refuse pricing edits with 409', async () => {
    const call = api(mesh, keys.test);
    const archived = await call('DELETE', `/v1/plans/${plans.graduated}`);
    expect(archived.body).toMatchObject({ status: 'archived', archived_at: expect.any(Number) });
    expect((await call('GET', `/v1/plans/${plans.graduated}`)).body.status).toBe('archived');
    expect((await call('GET', '/v1/plans?status=archived&limit=100')).body.data.map((plan: { id: string }) => plan.id)).toContain(plans.graduated);
    expect((await call('GET', '/v1/plans?status=active&limit=100')).body.data.map((plan: { id: string }) => plan.id)).not.toContain(plans.graduated);
    for (const [method, path, body] of [
      ['PATCH', `/v1/plans/${plans.graduated}`, { amount_monthly: 1 }],
      ['PUT', `/v1/plans/${plans.graduated}/tiers`, { tiers: TIERS }],
      ['POST', `/v1/plans/${plans.graduated}/price-components`, { type: 'fixed', name: 'Fee', unit_amount: 1 }],
      ['DELETE', `/v1/plans/${plans.graduated}`, undefined],
    ] as const) {
      const response = await call(method, path, body);
      expect({ path, status: response.status, code: response.body.error.code }).toEqual({ path, status: 409, code: 'plan_archived' });
    }
    expect((await call('PATCH', `/v1/plans/${plans.graduated}`, { name: 'Legacy graduated' })).body.name).toBe('Legacy graduated');
    const copy = await call('POST', `/v1/plans/${plans.graduated}/clone`, {});
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ status: 'active', name: 'Legacy graduated (copy)', pricing_model: 'graduated' });
    expect((await call('GET', `/v1/plans/${copy.body.id}/tiers`)).body.tiers).toHaveLength(2);
    const restored = await call('POST', `/v1/plans/${plans.graduated}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ status: 'active', archived_at: null });
    expect((await call('POST', `/v1/plans/${plans.graduated}/restore`)).body.error.code).toBe('plan_not_archived');
  });

  it('manages add-ons on and off sale', async () => {
    const call = api(mesh, keys.test);
    const created = await call('POST', '/v1/addons', { name: 'Extra seat', price_monthly: 500, currency: 'eur' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'addon', price_monthly: 500, currency: 'eur', status: 'on_sale', on_sale: true });
    const off = await call('DELETE', `/v1/addons/${created.body.id}`);
    expect(off.body).toMatchObject({ status: 'off_sale', on_sale: false });
    expect((await call('GET', `/v1/addons/${created.body.id}`)).body.status).toBe('off_sale');
    expect((await call('DELETE', `/v1/addons/${created.body.id}`)).body.error.code).toBe('addon_off_sale');
    expect((await call('PATCH', `/v1/addons/${created.body.id}`, { description: 'One more seat' })).body.description).toBe('One more seat');
    expect((await call('POST', `/v1/addons/${created.body.id}/restore`)).body.status).toBe('on_sale');
  });

  it('manages coupons and promotion codes', async () => {
    const call = api(mesh, keys.test);
    const coupon = await call('POST', '/v1/coupons', { name: 'Launch', type: 'percentage', value: 25, duration: 'repeating', duration_in_periods: 3 });
    expect(coupon.status).toBe(201);
    expect(coupon.body).toMatchObject({ object: 'coupon', type: 'percentage', value: 25, currency: null, duration: 'repeating', duration_in_periods: 3, times_redeemed: 0, deleted: false });
    expect((await call('PATCH', `/v1/coupons/${coupon.body.id}`, { duration: 'forever' })).body).toMatchObject({ duration: 'forever', duration_in_periods: null });
    expect((await call('GET', '/v1/coupons')).body.data.map((c: { id: string }) => c.id)).toContain(coupon.body.id);

    const code = await call('POST', '/v1/promotion-codes', { code: 'LAUNCH25', coupon: coupon.body.id, max_redemptions: 100 });
    expect(code.status).toBe(201);
    expect(code.body).toMatchObject({ object: 'promotion_code', code: 'LAUNCH25', coupon: coupon.body.id, active: true, max_redemptions: 100, expires_at: null });
    const duplicate = await call('POST', '/v1/promotion-codes', { code: 'launch25', coupon: coupon.body.id });
    expect({ status: duplicate.status, code: duplicate.body.error.code, param: duplicate.body.error.param }).toEqual({ status: 409, code: 'promotion_code_exists', param: 'code' });
    const unknownCoupon = await call('POST', '/v1/promotion-codes', { code: 'NOPE', coupon: 'coupon_doesnotexist' });
    expect({ status: unknownCoupon.status, code: unknownCoupon.body.error.code, param: unknownCoupon.body.error.param }).toEqual({ status: 400, code: 'resource_missing', param: 'coupon' });
    const expiresAt = Math.floor(Date.now() / 1000) + 86_400;
    expect((await call('PATCH', `/v1/promotion-codes/${code.body.id}`, { active: false, expires_at: expiresAt, max_redemptions: null })).body)
      .toMatchObject({ active: false, expires_at: expiresAt, max_redemptions: null });
    expect((await call('GET', `/v1/promotion-codes?code=launch25`)).body.data.map((c: { id: string }) => c.id)).toEqual([code.body.id]);

    expect((await call('DELETE', `/v1/coupons/${coupon.body.id}`)).body).toMatchObject({ id: coupon.body.id, deleted: true });
    expect((await call('PATCH', `/v1/coupons/${coupon.body.id}`, { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', `/v1/promotion-codes/${code.body.id}`)).status).toBe(404);
  });

  it('keeps apps apart: a live key cannot see sandbox plans', async () => {
    const live = api(mesh, keys.live);
    const retrieved = await live('GET', `/v1/plans/${plans.flat_rate}`);
    expect(retrieved.status).toBe(404);
    expect(retrieved.body.error).toMatchObject({ code: 'resource_missing', param: 'id' });
    expect((await live('GET', `/v1/plans/${plans.volume}/tiers`)).status).toBe(404);
    expect((await api(mesh, keys.livePublishable)('GET', `/v1/plans/${plans.flat_rate}`)).status).toBe(404);
    expect((await live('PATCH', `/v1/plans/${plans.flat_rate}`, { name: 'x' })).status).toBe(404);
    expect((await live('GET', '/v1/plans')).body.data.map((plan: { id: string }) => plan.id)).not.toContain(plans.flat_rate);
    const livePlan = await live('POST', '/v1/plans', { name: 'Live', pricing_model: 'flat_rate', amount_monthly: 1_000 });
    expect(livePlan.body.livemode).toBe(true);
    expect((await api(mesh, keys.test)('GET', `/v1/plans/${livePlan.body.id}`)).status).toBe(404);
  });

  it('replays a create with the same Idempotency-Key', async () => {
    const call = api(mesh, keys.test);
    const headers = { 'idempotency-key': `catalog-${Date.now()}` };
    const body = { name: 'Idempotent', pricing_model: 'per_unit', amount_monthly: 100 };
    const first = await call('POST', '/v1/plans', body, headers);
    const second = await call('POST', '/v1/plans', body, headers);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
  });
});
