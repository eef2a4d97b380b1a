import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * The 18 subscription routes through the gateway, as an integrator calls them, with every
 * service its own process. Time moves only on sandbox test clocks, so each billed amount is
 * exact: every test compares the upcoming-invoice preview with the invoice the billing clock
 * then raises in the invoicing service.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;

const DAY = 86_400;
// 2027-01-01T00:00:00Z: January has 31 days, so a monthly period from here is 2 678 400 s.
const T0 = Date.UTC(2027, 0, 1) / 1000;
const FEB1 = Date.UTC(2027, 1, 1) / 1000;
const MAR1 = Date.UTC(2027, 2, 1) / 1000;
const APR1 = Date.UTC(2027, 3, 1) / 1000;
/** The part of `amount` left after `at` in the period [start, end), rounded half up: the documented proration rule. */
const leftOf = (amount: number, at: number, start = T0, end = FEB1) => Math.floor((2 * amount * (end - at) + (end - start)) / (2 * (end - start)));
const januaryLeft = (amount: number, at: number) => leftOf(amount, at);

const catalog: Record<string, string> = {};

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Subscriptions Ltd'));
  call = api(mesh, keys.test);
  const created = async (path: string, body: object) => {
    const response = await call('POST', path, body);
    expect(response.status).toBe(201);
    return response.body.id as string;
  };
  catalog.basic = await created('/v1/plans', { name: 'Basic', pricing_model: 'per_unit', amount_monthly: 1_000, billing_intervals: ['monthly', 'yearly'] });
  catalog.pro = await created('/v1/plans', { name: 'Pro', pricing_model: 'per_unit', amount_monthly: 3_000, billing_intervals: ['monthly', 'yearly'] });
  catalog.monthlyOnly = await created('/v1/plans', { name: 'Monthly only', pricing_model: 'flat_rate', amount_monthly: 500, billing_intervals: ['monthly'] });
  catalog.archived = await created('/v1/plans', { name: 'Legacy', pricing_model: 'flat_rate', amount_monthly: 100 });
  expect((await call('DELETE', `/v1/plans/${catalog.archived}`)).status).toBe(200);
  catalog.support = await created('/v1/addons', { name: 'Support', price_monthly: 600 });
  catalog.offSale = await created('/v1/addons', { name: 'Fax line', price_monthly: 100 });
  expect((await call('DELETE', `/v1/addons/${catalog.offSale}`)).status).toBe(200);
  const quarterOff = await created('/v1/coupons', { name: '25 % for two periods', type: 'percentage', value: 25, duration: 'repeating', duration_in_periods: 2 });
  const fiveOff = await created('/v1/coupons', { name: '$5 once', type: 'fixed_amount', value: 500, currency: 'usd', duration: 'once' });
  catalog.spring = await created('/v1/promotion-codes', { code: 'SPRING25', coupon: quarterOff });
  catalog.single = await created('/v1/promotion-codes', { code: 'ONLYONCE', coupon: fiveOff, max_redemptions: 1 });
  await created('/v1/promotion-codes', { code: 'ASLEEP', coupon: fiveOff, active: false });
  // Expires tomorrow in real time: long past on the test clocks below (2027).
  await created('/v1/promotion-codes', { code: 'BYGONE', coupon: fiveOff, expires_at: Math.floor(Date.now() / 1000) + DAY });
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

/** A customer on a fresh test clock frozen at `frozenTime`. */
async function customerOnClock(frozenTime = T0): Promise<{ customer: string; clock: string }> {
  const clock = await call('POST', '/v1/test-clocks', { frozen_time: frozenTime, name: 'subscriptions mesh' });
  expect(clock.status).toBe(201);
  const customer = await call('POST', '/v1/customers', { name: 'Grace Hopper', email: 'grace@example.com', test_clock: clock.body.id });
  expect(customer.status).toBe(201);
  return { customer: customer.body.id, clock: clock.body.id };
}

async function subscribe(body: Record<string, unknown>) {
  const response = await call('POST', '/v1/subscriptions', { plan: catalog.basic, billing_interval: 'monthly', ...body });
  expect(response.status).toBe(201);
  return response.body;
}

/** Advances the clock and waits until every move it reached (invoices included) is done. */
async function advance(clock: string, frozenTime: number): Promise<void> {
  const moved = await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: frozenTime });
  expect(moved.status).toBe(200);
  await eventually(async () => (await call('GET', `/v1/test-clocks/${clock}`)).body.status === 'ready', 60_000, 'the test clock to be ready');
}

/** The subscription's invoices, oldest first. */
async function invoicesOf(subscription: string): Promise<any[]> {
  const { body } = await call('GET', `/v1/invoices?subscription=${subscription}&limit=100`);
  return [...body.data].reverse();
}

const promotionCode = async (code: string) => (await call('GET', `/v1/promotion-codes?code=${code}`)).body.data[0];

const upcoming = async (subscription: string) => {
  const response = await call('GET', `/v1/subscriptions/${subscription}/upcoming-invoice`);
  expect(response.status).toBe(200);
  return response.body;
};

/** The preview's lines as the raised invoice shows them. */
const asInvoiceLines = (preview: any) => preview.lines.map(({ kind, description, quantity, amount }: any) => ({ kind, description, quantity, amount }));
const linesOf = (invoice: any) => invoice.lines.map(({ kind, description, quantity, amount }: any) => ({ kind, description, quantity, amount }));

/** Checks that the invoice raised for a period is, line for line, the preview taken before. */
function expectBilledAsPreviewed(invoice: any, preview: any): void {
  expect(linesOf(invoice)).toEqual(asInvoiceLines(preview));
  expect([invoice.subtotal, invoice.discount, invoice.total]).toEqual([preview.subtotal, preview.discount, preview.total]);
  expect(invoice.period).toEqual({ start: preview.period_start, end: preview.period_end });
}

const error = (response: { status: number; body: any }) => [response.status, response.body.error?.code, response.body.error?.param];

describe('create, list, retrieve', () => {
  it('creates with a trial, quantity, add-ons, a promotion code, billing_cycles and metadata; the trial end bills the preview', async () => {
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({
      customer, quantity: 2, trial_days: 14, add_ons: [{ addon: catalog.support }], promotion_code: 'spring25', billing_cycles: 12, metadata: { team: 'compilers' },
    });
    expect(subscription).toMatchObject({
      object: 'subscription', status: 'trialing', customer, plan: catalog.basic, quantity: 2, trial_start: T0, trial_end: T0 + 14 * DAY,
      billing_cycles: 12, periods_billed: 0, metadata: { team: 'compilers' }, test_clock: clock, pending_change: null,
      add_ons: [{ object: 'subscription_addon', addon: catalog.support, name: 'Support', quantity: 1, price_monthly: 600, currency: 'usd', added: T0 }],
      discount: { object: 'discount', type: 'percentage', value: 25, duration: 'repeating', duration_in_periods: 2, periods_remaining: 2, promotion_code: catalog.spring, promotion_code_text: 'SPRING25' },
    });
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toEqual(subscription);
    const listed = await call('GET', `/v1/subscriptions?customer=${customer}&status=trialing`);
    expect([listed.status, listed.body.total, listed.body.data.map((item: any) => item.id)]).toEqual([200, 1, [subscription.id]]);
    expect((await call('GET', `/v1/subscriptions?customer=${customer}&status=active`)).body.total).toBe(0);
    expect(error(await call('GET', '/v1/subscriptions?status=sleeping'))).toEqual([400, 'parameter_invalid', 'status']);
    expect((await promotionCode('SPRING25')).times_redeemed).toBe(1);

    const preview = await upcoming(subscription.id);
    expect(preview).toMatchObject({ object: 'upcoming_invoice', subscription: subscription.id, customer, billing_reason: 'subscription_cycle', period_start: T0 + 14 * DAY, subtotal: 2_600, discount: 650, total: 1_950 });
    expect(preview.lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 2_000], ['addon', 600]]);
    await advance(clock, T0 + 15 * DAY);
    const [invoice] = await invoicesOf(subscription.id);
    expectBilledAsPreviewed(invoice, preview);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({ status: 'active', periods_billed: 1, discount: { periods_remaining: 1 } });
  });

  it('refuses bad input with 400 and forbidden states with 409, creating nothing', async () => {
    const { customer } = await customerOnClock();
    const cases: [Record<string, unknown>, number, string, string | undefined][] = [
      [{ quantity: 0 }, 400, 'parameter_invalid', 'quantity'],
      [{ billing_interval: 'weekly' }, 400, 'parameter_invalid', 'billing_interval'],
      [{ plan: catalog.monthlyOnly, billing_interval: 'yearly' }, 400, 'parameter_invalid', 'billing_interval'],
      [{ plan: 'plan_nope' }, 400, 'resource_missing', 'plan'],
      [{ add_ons: [{ addon: catalog.offSale }] }, 400, 'addon_off_sale', 'add_ons[0].addon'],
      [{ add_ons: [{ addon: 'addon_nope' }] }, 400, 'resource_missing', 'add_ons[0].addon'],
      [{ add_ons: [{ addon: catalog.support, quantity: 0 }] }, 400, 'parameter_invalid', 'add_ons[0].quantity'],
      [{ promotion_code: 'NOSUCHCODE' }, 400, 'resource_missing', 'promotion_code'],
      [{ promotion_code: 'ASLEEP' }, 400, 'promotion_code_inactive', 'promotion_code'],
      [{ promotion_code: 'BYGONE' }, 400, 'promotion_code_expired', 'promotion_code'],
      [{ plan: catalog.archived }, 409, 'plan_archived', undefined],
    ];
    for (const [body, status, code, param] of cases) {
      expect([body, error(await call('POST', '/v1/subscriptions', { customer, plan: catalog.basic, billing_interval: 'monthly', ...body }))]).toEqual([body, [status, code, param]]);
    }
    const deleted = (await call('POST', '/v1/customers', { name: 'Gone', email: 'gone@example.com' })).body.id;
    await call('DELETE', `/v1/customers/${deleted}`);
    expect(error(await call('POST', '/v1/subscriptions', { customer: deleted, plan: catalog.basic, billing_interval: 'monthly' }))).toEqual([409, 'customer_deleted', undefined]);
    expect((await call('GET', `/v1/subscriptions?customer=${customer}`)).body.total).toBe(0);
  });
});

describe('lifecycle moves', () => {
  it('cancels at period end and keeps it, cancels now, reactivates as a new one, pauses and resumes, extends a trial; 409 for forbidden moves', async () => {
    const { customer } = await customerOnClock();
    const subscription = await subscribe({ customer });
    const ending = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
    expect([ending.status, ending.body.cancel_at_period_end]).toEqual([200, true]);
    expect(error(await call('GET', `/v1/subscriptions/${subscription.id}/upcoming-invoice`))).toEqual([404, 'subscription_no_upcoming_invoice', undefined]);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`)).body).toMatchObject({ id: subscription.id, cancel_at_period_end: false });

    const paused = await call('POST', `/v1/subscriptions/${subscription.id}/pause`, { resume_at: T0 + 40 * DAY });
    expect([paused.status, paused.body.status, paused.body.resume_at]).toEqual([200, 'paused', T0 + 40 * DAY]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/pause`))).toEqual([409, 'subscription_not_active', undefined]);
    expect((await upcoming(subscription.id)).period_start).toBe(T0 + 40 * DAY);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/resume`)).body.status).toBe('active');
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/resume`))).toEqual([409, 'subscription_not_paused', undefined]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/extend-trial`, { trial_end: T0 + 30 * DAY }))).toEqual([409, 'subscription_not_trialing', undefined]);

    const cancelled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`);
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/cancel`))).toEqual([409, 'subscription_cancelled', undefined]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 2 }))).toEqual([409, 'subscription_cancelled', undefined]);
    const reactivated = await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`);
    expect([reactivated.status, reactivated.body.status, reactivated.body.reactivated_from]).toEqual([200, 'active', subscription.id]);
    expect(reactivated.body.id).not.toBe(subscription.id);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`))).toEqual([409, 'subscription_already_reactivated', undefined]);

    const trialing = await subscribe({ customer, trial_days: 7 });
    const extended = await call('POST', `/v1/subscriptions/${trialing.id}/extend-trial`, { trial_end: T0 + 10 * DAY });
    expect([extended.status, extended.body.trial_end]).toEqual([200, T0 + 10 * DAY]);
  });

  it('answers 404 to another app for every subscription route, and for an unknown id', async () => {
    const { customer } = await customerOnClock();
    const { id } = await subscribe({ customer, add_ons: [{ addon: catalog.support }] });
    const live = api(mesh, keys.live);
    const routes: [string, string, object?][] = [
      ['GET', `/v1/subscriptions/${id}`], ['POST', `/v1/subscriptions/${id}/cancel`, {}], ['POST', `/v1/subscriptions/${id}/pause`, {}],
      ['POST', `/v1/subscriptions/${id}/resume`], ['POST', `/v1/subscriptions/${id}/change-plan`, { quantity: 2 }], ['DELETE', `/v1/subscriptions/${id}/pending-change`],
      ['POST', `/v1/subscriptions/${id}/reactivate`], ['POST', `/v1/subscriptions/${id}/extend-trial`, { trial_end: T0 + 9 * DAY }],
      ['POST', `/v1/subscriptions/${id}/billing-interval`, { billing_interval: 'yearly' }], ['POST', `/v1/subscriptions/${id}/promotion-code`, { promotion_code: 'SPRING25' }],
      ['DELETE', `/v1/subscriptions/${id}/promotion-code`], ['GET', `/v1/subscriptions/${id}/upcoming-invoice`], ['GET', `/v1/subscriptions/${id}/addons`],
      ['POST', `/v1/subscriptions/${id}/addons`, { addon: catalog.support }], ['PATCH', `/v1/subscriptions/${id}/addons/${catalog.support}`, { quantity: 2 }],
      ['DELETE', `/v1/subscriptions/${id}/addons/${catalog.support}`],
    ];
    for (const [method, path, body] of routes) {
      expect([method, path, error(await live(method, path, body))]).toEqual([method, path, [404, 'resource_missing', 'id']]);
    }
    expect(error(await call('GET', '/v1/subscriptions/sub_unknown/upcoming-invoice'))).toEqual([404, 'resource_missing', 'id']);
    expect((await live('GET', '/v1/subscriptions')).body.total).toBe(0);
    // Nothing the live key tried changed the sandbox subscription.
    expect((await call('GET', `/v1/subscriptions/${id}`)).body).toMatchObject({ status: 'active', quantity: 1, discount: null, add_ons: [{ quantity: 1 }] });
  });
});

describe('plan changes', () => {
  it('changes the plan now: credit and charge to the second on the next invoice, which bills exactly the preview; subscription.updated carries the old plan', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/updates`, events: ['subscription.updated'] });
    expect(endpoint.status).toBe(201);
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    const at = T0 + 10 * DAY + 3_600;
    await advance(clock, at);
    const changed = await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan: catalog.pro });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ plan: catalog.pro, quantity: 1, price: { plan_name: 'Pro', amount_monthly: 3_000 }, pending_change: null });

    const preview = await upcoming(subscription.id);
    expect(preview.lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 3_000], ['proration', -januaryLeft(1_000, at)], ['proration', januaryLeft(3_000, at)]]);
    expect(preview.total).toBe(3_000 - januaryLeft(1_000, at) + januaryLeft(3_000, at));
    // No invoice at the change: the prorations wait for the renewal.
    expect((await invoicesOf(subscription.id)).map((invoice) => invoice.billing_reason)).toEqual(['subscription_create']);
    await advance(clock, FEB1 + 3_600);
    const invoices = await invoicesOf(subscription.id);
    expect(invoices).toHaveLength(2);
    expectBilledAsPreviewed(invoices[1], preview);
    expect((await upcoming(subscription.id)).total).toBe(3_000);

    const deliveries = await eventually(async () => {
      const got = (await receiver.received('/updates')).map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as any);
      return got.find((event) => event.data.object.id === subscription.id) ? got : undefined;
    }, 60_000, 'subscription.updated');
    const update = deliveries.find((event) => event.data.object.id === subscription.id);
    expect(update.data.previous_attributes).toMatchObject({ plan: catalog.basic, price: { plan_name: 'Basic' } });
    expect(update.data.object).toMatchObject({ plan: catalog.pro });
  });

  it('defers a change to the period end as a pending change, deletes it (409 when none), and the renewal applies a new one', async () => {
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    const pending = await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 3, effective: 'period_end' });
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ quantity: 1, pending_change: { plan: catalog.basic, quantity: 3, effective_at: FEB1 } });
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 2 }))).toEqual([409, 'subscription_pending_change', undefined]);
    const dropped = await call('DELETE', `/v1/subscriptions/${subscription.id}/pending-change`);
    expect([dropped.status, dropped.body.pending_change]).toEqual([200, null]);
    expect(error(await call('DELETE', `/v1/subscriptions/${subscription.id}/pending-change`))).toEqual([409, 'subscription_no_pending_change', undefined]);

    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, {}))).toEqual([400, 'parameter_missing', 'plan']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 0 }))).toEqual([400, 'parameter_invalid', 'quantity']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 1 }))).toEqual([400, 'parameter_invalid', 'plan']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan: catalog.archived }))).toEqual([409, 'plan_archived', undefined]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { quantity: 2, effective: 'tomorrow' }))).toEqual([400, 'parameter_invalid', 'effective']);

    await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan: catalog.pro, quantity: 2, effective: 'period_end' });
    const preview = await upcoming(subscription.id);
    expect([preview.period_start, preview.total]).toEqual([FEB1, 6_000]);
    await advance(clock, FEB1 + 3_600);
    expectBilledAsPreviewed((await invoicesOf(subscription.id))[1], preview);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({ plan: catalog.pro, quantity: 2, pending_change: null, current_period_start: FEB1 });
  });

  it('changes the billing interval: a new period starts now, invoiced with the unused part credited', async () => {
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/billing-interval`, { billing_interval: 'weekly' }))).toEqual([400, 'parameter_invalid', 'billing_interval']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/billing-interval`, { billing_interval: 'monthly' }))).toEqual([400, 'parameter_invalid', 'billing_interval']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/billing-interval`, { billing_interval: 'quarterly' }))).toEqual([400, 'parameter_invalid', 'billing_interval']);
    const at = T0 + 10 * DAY;
    await advance(clock, at);
    const changed = await call('POST', `/v1/subscriptions/${subscription.id}/billing-interval`, { billing_interval: 'yearly' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ billing_interval: 'yearly', current_period_start: at, current_period_end: Date.UTC(2028, 0, 11) / 1000 });
    await advance(clock, at + 60);
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((invoice) => [invoice.billing_reason, invoice.total])).toEqual([['subscription_create', 1_000], ['subscription_update', 12_000 - januaryLeft(1_000, at)]]);
  });
});

describe('promotion codes', () => {
  it('a repeating coupon discounts the next two invoices and stops; remove, replace and refusals', async () => {
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    const applied = await call('POST', `/v1/subscriptions/${subscription.id}/promotion-code`, { promotion_code: 'SPRING25' });
    expect([applied.status, applied.body.discount?.periods_remaining]).toEqual([200, 2]);
    const previews: any[] = [];
    for (const moment of [FEB1, MAR1, APR1]) {
      previews.push(await upcoming(subscription.id));
      await advance(clock, moment + 3_600);
    }
    const invoices = (await invoicesOf(subscription.id)).slice(1);
    expect(invoices.map((invoice) => [invoice.discount, invoice.total])).toEqual([[250, 750], [250, 750], [0, 1_000]]);
    invoices.forEach((invoice, index) => expectBilledAsPreviewed(invoice, previews[index]));
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.discount).toBeNull();

    expect(error(await call('DELETE', `/v1/subscriptions/${subscription.id}/promotion-code`))).toEqual([409, 'subscription_no_discount', undefined]);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/promotion-code`, { promotion_code: 'ONLYONCE' })).body.discount).toMatchObject({ type: 'fixed_amount', value: 500, duration: 'once', periods_remaining: 1 });
    expect((await upcoming(subscription.id)).total).toBe(500);
    const removed = await call('DELETE', `/v1/subscriptions/${subscription.id}/promotion-code`);
    expect([removed.status, removed.body.discount]).toEqual([200, null]);
    expect((await upcoming(subscription.id)).total).toBe(1_000);

    const other = await subscribe({ customer });
    for (const [code, expected] of [['ONLYONCE', 'promotion_code_exhausted'], ['ASLEEP', 'promotion_code_inactive'], ['BYGONE', 'promotion_code_expired'], ['NOPE42', 'resource_missing']]) {
      expect([code, error(await call('POST', `/v1/subscriptions/${other.id}/promotion-code`, { promotion_code: code }))]).toEqual([code, [400, expected, 'promotion_code']]);
    }
    expect(error(await call('POST', `/v1/subscriptions/${other.id}/promotion-code`, {}))).toEqual([400, 'parameter_missing', 'promotion_code']);
    expect(await promotionCode('ONLYONCE')).toMatchObject({ id: catalog.single, times_redeemed: 1, max_redemptions: 1 });
  });
});

describe('subscription add-ons', () => {
  it('lists, adds, updates and removes add-ons, prorated onto the renewal that bills the preview; refusals', async () => {
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    const empty = await call('GET', `/v1/subscriptions/${subscription.id}/addons`);
    expect([empty.status, empty.body.object, empty.body.total, empty.body.data]).toEqual([200, 'list', 0, []]);
    const at = T0 + 15 * DAY;
    await advance(clock, at);

    const added = await call('POST', `/v1/subscriptions/${subscription.id}/addons`, { addon: catalog.support, quantity: 2 });
    expect([added.status, added.body]).toEqual([201, { object: 'subscription_addon', addon: catalog.support, name: 'Support', quantity: 2, price_monthly: 600, currency: 'usd', added: at }]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/addons`, { addon: catalog.support }))).toEqual([409, 'subscription_addon_exists', undefined]);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/addons`, { addon: catalog.offSale }))).toEqual([400, 'addon_off_sale', 'addon']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/addons`, { addon: 'addon_nope' }))).toEqual([400, 'resource_missing', 'addon']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/addons`, { addon: catalog.support, quantity: 0 }))).toEqual([400, 'parameter_invalid', 'quantity']);

    const updated = await call('PATCH', `/v1/subscriptions/${subscription.id}/addons/${catalog.support}`, { quantity: 3 });
    expect([updated.status, updated.body.quantity]).toEqual([200, 3]);
    expect(error(await call('PATCH', `/v1/subscriptions/${subscription.id}/addons/${catalog.support}`, { quantity: 0 }))).toEqual([400, 'parameter_invalid', 'quantity']);
    expect(error(await call('PATCH', `/v1/subscriptions/${subscription.id}/addons/${catalog.offSale}`, { quantity: 2 }))).toEqual([404, 'resource_missing', 'id']);
    const listed = await call('GET', `/v1/subscriptions/${subscription.id}/addons`);
    expect([listed.body.total, listed.body.data]).toEqual([1, [updated.body]]);

    const preview = await upcoming(subscription.id);
    const twoLeft = januaryLeft(1_200, at);
    const threeLeft = januaryLeft(1_800, at);
    expect(preview.lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 1_000], ['addon', 1_800], ['proration', twoLeft], ['proration', -twoLeft], ['proration', threeLeft]]);
    await advance(clock, FEB1 + 3_600);
    expectBilledAsPreviewed((await invoicesOf(subscription.id))[1], preview);

    const removed = await call('DELETE', `/v1/subscriptions/${subscription.id}/addons/${catalog.support}`);
    expect([removed.status, removed.body.addon, removed.body.quantity]).toEqual([200, catalog.support, 3]);
    expect(error(await call('DELETE', `/v1/subscriptions/${subscription.id}/addons/${catalog.support}`))).toEqual([404, 'resource_missing', 'id']);
    // The credit (1797) exceeds the next period (1000): that invoice bills 0 and carries 797 on.
    const credit = leftOf(1_800, FEB1 + 3_600, FEB1, MAR1);
    const next = await upcoming(subscription.id);
    expect(next.lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 1_000], ['proration', -credit], ['proration', credit - 1_000]]);
    expect([next.subtotal, next.total]).toEqual([0, 0]);
    await advance(clock, MAR1 + 3_600);
    expectBilledAsPreviewed((await invoicesOf(subscription.id))[2], next);
    expect((await upcoming(subscription.id)).lines.map((line: any) => [line.kind, line.amount])).toEqual([['plan', 1_000], ['proration', 1_000 - credit]]);
  });
});

describe('pause with resume_at', () => {
  it('bills nothing while paused; the clock resumes it at resume_at into a new period billed as previewed; paused, resumed, cancelled and reactivated reach a webhook once each', async () => {
    const events = ['subscription.paused', 'subscription.resumed', 'subscription.cancelled', 'subscription.reactivated'];
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/pause-resume`, events });
    expect(endpoint.status).toBe(201);
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer });
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/pause`, { resume_at: T0 - DAY }))).toEqual([400, 'parameter_invalid', 'resume_at']);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/pause`, { resume_at: 'soon' }))).toEqual([400, 'parameter_invalid', 'resume_at']);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status).toBe('active');

    // One set to end is not paused (the pause would drop its end unannounced) until it is kept.
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true })).body.cancel_at_period_end).toBe(true);
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {}))).toEqual([409, 'subscription_cancel_scheduled', undefined]);
    expect((await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`)).body).toMatchObject({ status: 'active', cancel_at_period_end: false });

    // Paused on January 11 until February 20: February 1 passes without a renewal.
    await advance(clock, T0 + 10 * DAY);
    const RESUME = Date.UTC(2027, 1, 20) / 1000;
    const paused = await call('POST', `/v1/subscriptions/${subscription.id}/pause`, { resume_at: RESUME });
    expect(paused.body).toMatchObject({ status: 'paused', paused_at: T0 + 10 * DAY, resume_at: RESUME });
    const preview = await upcoming(subscription.id);
    expect(preview).toMatchObject({ billing_reason: 'subscription_cycle', period_start: RESUME, period_end: Date.UTC(2027, 2, 20) / 1000, total: 1_000 });
    await advance(clock, FEB1 + DAY);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body.status).toBe('paused');
    expect((await invoicesOf(subscription.id)).map((invoice) => invoice.billing_reason)).toEqual(['subscription_create']);

    await advance(clock, RESUME + 3_600);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'active', paused_at: null, resume_at: null, current_period_start: RESUME, current_period_end: Date.UTC(2027, 2, 20) / 1000, periods_billed: 2,
    });
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((invoice) => invoice.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
    expectBilledAsPreviewed(invoices[1], preview);

    expect((await call('POST', `/v1/subscriptions/${subscription.id}/cancel`)).body.status).toBe('cancelled');
    const reactivated = (await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`)).body;
    const delivered = async () => (await receiver.received('/pause-resume'))
      .map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as any)
      .filter((event) => [subscription.id, reactivated.id].includes(event.data.object.id))
      .map((event) => [event.type, event.data.object.id, event.data.object.status]);
    await eventually(async () => (await delivered()).length >= 4 || undefined, 60_000, 'four subscription events');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await delivered()).sort()).toEqual([
      ['subscription.cancelled', subscription.id, 'cancelled'],
      ['subscription.paused', subscription.id, 'paused'],
      ['subscription.reactivated', reactivated.id, 'active'],
      ['subscription.resumed', subscription.id, 'active'],
    ]);
  });
});

describe('bad trial, cycle and date input', () => {
  it('refuses impossible trials, cycles and dates with 400 and the offending field, judged at the customer\'s clock time; nothing is created or changed', async () => {
    const { customer } = await customerOnClock();
    const cases: [Record<string, unknown>, string][] = [
      [{ trial_days: 0 }, 'trial_days'],
      [{ trial_days: 731 }, 'trial_days'],
      [{ trial_days: 1.5 }, 'trial_days'],
      [{ trial_days: 3, trial_end: T0 + 5 * DAY }, 'trial_end'],
      // In the past on the customer's clock (2027), though in the future in real time.
      [{ trial_end: T0 - DAY }, 'trial_end'],
      [{ trial_end: T0 + 731 * DAY }, 'trial_end'],
      [{ trial_end: 'tomorrow' }, 'trial_end'],
      [{ billing_cycles: 0 }, 'billing_cycles'],
      [{ billing_cycles: 1_001 }, 'billing_cycles'],
      [{ quantity: 1_000_001 }, 'quantity'],
      [{ metadata: 'team' }, 'metadata'],
    ];
    for (const [body, param] of cases) {
      expect([body, error(await call('POST', '/v1/subscriptions', { customer, plan: catalog.basic, billing_interval: 'monthly', ...body }))]).toEqual([body, [400, 'parameter_invalid', param]]);
    }
    expect((await call('GET', `/v1/subscriptions?customer=${customer}`)).body.total).toBe(0);

    const trialing = await subscribe({ customer, trial_days: 7 });
    for (const trialEnd of [T0 + 7 * DAY, T0 + 3 * DAY, T0 + 731 * DAY]) {
      expect([trialEnd, error(await call('POST', `/v1/subscriptions/${trialing.id}/extend-trial`, { trial_end: trialEnd }))]).toEqual([trialEnd, [400, 'parameter_invalid', 'trial_end']]);
    }
    expect(error(await call('POST', `/v1/subscriptions/${trialing.id}/extend-trial`, {}))).toEqual([400, 'parameter_missing', 'trial_end']);
    expect(error(await call('POST', `/v1/subscriptions/${trialing.id}/pause`, {}))).toEqual([409, 'subscription_not_active', undefined]);
    // A trial's interval change bills nothing now: the first period, at the trial's end, uses it.
    expect((await call('POST', `/v1/subscriptions/${trialing.id}/billing-interval`, { billing_interval: 'yearly' })).body).toMatchObject({ status: 'trialing', billing_interval: 'yearly', trial_end: T0 + 7 * DAY });
    expect(await invoicesOf(trialing.id)).toEqual([]);
    expect(await upcoming(trialing.id)).toMatchObject({ period_start: T0 + 7 * DAY, total: 12_000 });
    expect((await call('GET', `/v1/subscriptions/${trialing.id}`)).body).toMatchObject({ status: 'trialing', trial_end: T0 + 7 * DAY });
    // A deleted customer's cancelled subscription is not brought back.
    const { customer: leaving } = await customerOnClock();
    const ended = await subscribe({ customer: leaving });
    expect((await call('POST', `/v1/subscriptions/${ended.id}/cancel`)).body.status).toBe('cancelled');
    expect((await call('DELETE', `/v1/customers/${leaving}`)).status).toBe(200);
    expect(error(await call('POST', `/v1/subscriptions/${ended.id}/reactivate`))).toEqual([409, 'customer_deleted', undefined]);
    expect((await call('GET', `/v1/subscriptions?customer=${leaving}`)).body.total).toBe(1);
  });
});

describe('an instalment plan (billing_cycles)', () => {
  it('bills exactly billing_cycles periods, completes at the last one\'s end with subscription.completed delivered once, then refuses changes', async () => {
    const endpoint = await call('POST', '/v1/webhooks', { url: `${receiver.url}/instalments`, events: ['subscription.completed'] });
    expect(endpoint.status).toBe(201);
    const { customer, clock } = await customerOnClock();
    const subscription = await subscribe({ customer, billing_cycles: 2 });
    expect(subscription).toMatchObject({ status: 'active', billing_cycles: 2, periods_billed: 1 });
    const second = await upcoming(subscription.id);
    expect(second).toMatchObject({ period_start: FEB1, total: 1_000 });
    await advance(clock, FEB1 + 3_600);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({ status: 'active', periods_billed: 2 });
    // The last instalment is billed: the next move completes it, and raises nothing.
    expect(error(await call('GET', `/v1/subscriptions/${subscription.id}/upcoming-invoice`))).toEqual([404, 'subscription_no_upcoming_invoice', undefined]);

    await advance(clock, APR1 + 3_600);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({ status: 'completed', ended_at: MAR1, periods_billed: 2 });
    const invoices = await invoicesOf(subscription.id);
    expect(invoices.map((invoice) => [invoice.billing_reason, invoice.period.start, invoice.total])).toEqual([['subscription_create', T0, 1_000], ['subscription_cycle', FEB1, 1_000]]);
    expectBilledAsPreviewed(invoices[1], second);
    for (const [method, path, body] of [['POST', 'cancel', {}], ['POST', 'pause', {}], ['POST', 'change-plan', { quantity: 2 }], ['POST', 'billing-interval', { billing_interval: 'yearly' }]] as const) {
      expect([path, error(await call(method, `/v1/subscriptions/${subscription.id}/${path}`, body))]).toEqual([path, [409, path === 'pause' ? 'subscription_not_active' : 'subscription_completed', undefined]]);
    }
    expect(error(await call('POST', `/v1/subscriptions/${subscription.id}/reactivate`))).toEqual([409, 'subscription_not_cancelled', undefined]);

    const delivered = async () => (await receiver.received('/instalments'))
      .map((delivery) => constructEvent(delivery.body, delivery.headers, endpoint.body.secret) as any)
      .filter((event) => event.data.object.id === subscription.id)
      .map((event) => [event.type, event.data.object.status]);
    await eventually(async () => (await delivered()).length >= 1 || undefined, 60_000, 'subscription.completed');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await delivered()).toEqual([['subscription.completed', 'completed']]);
  });
});

describe('test clocks', () => {
  it('creates, lists, retrieves, advances and deletes sandbox clocks; a live key gets 404 on every route; deleting stops its moves and keeps its subscriptions readable', async () => {
    expect(error(await call('POST', '/v1/test-clocks', { name: 'no time' }))).toEqual([400, 'parameter_missing', 'frozen_time']);
    expect(error(await call('POST', '/v1/test-clocks', { frozen_time: 'noon' }))).toEqual([400, 'parameter_invalid', 'frozen_time']);
    const { customer, clock } = await customerOnClock();
    const got = await call('GET', `/v1/test-clocks/${clock}`);
    expect(got.body).toMatchObject({ id: clock, object: 'test_clock', livemode: false, frozen_time: T0, status: 'ready', deleted: false });
    expect((await call('GET', '/v1/test-clocks?limit=100')).body.data.map((item: any) => item.id)).toContain(clock);
    expect(error(await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: T0 - 1 }))).toEqual([400, 'parameter_invalid', 'frozen_time']);
    expect(error(await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: T0 + 6 * 366 * DAY }))).toEqual([400, 'parameter_invalid', 'frozen_time']);
    expect(error(await call('POST', '/v1/test-clocks/clock_nope/advance', { frozen_time: T0 + DAY }))).toEqual([404, 'resource_missing', 'id']);

    const live = api(mesh, keys.live);
    const routes: [string, string, object?][] = [
      ['POST', '/v1/test-clocks', { frozen_time: T0 }], ['GET', '/v1/test-clocks'], ['GET', `/v1/test-clocks/${clock}`],
      ['POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: T0 + DAY }], ['DELETE', `/v1/test-clocks/${clock}`],
    ];
    for (const [method, path, body] of routes) expect([method, path, (await live(method, path, body)).status]).toEqual([method, path, 404]);
    expect((await call('GET', `/v1/test-clocks/${clock}`)).body).toMatchObject({ frozen_time: T0, deleted: false });

    const subscription = await subscribe({ customer });
    const deleted = await call('DELETE', `/v1/test-clocks/${clock}`);
    expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
    expect(error(await call('GET', `/v1/test-clocks/${clock}`))).toEqual([404, 'resource_missing', 'id']);
    expect(error(await call('POST', `/v1/test-clocks/${clock}/advance`, { frozen_time: FEB1 + DAY }))).toEqual([404, 'resource_missing', 'id']);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).body).toMatchObject({ status: 'active', current_period_start: T0, test_clock: clock });
    expect((await invoicesOf(subscription.id)).map((invoice) => invoice.billing_reason)).toEqual(['subscription_create']);
  });
});
