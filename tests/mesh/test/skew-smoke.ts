import { randomBytes } from 'node:crypto';
import type { WebhookReceiver } from '@recur/testing';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { api, eventually, type Mesh } from './mesh';

/**
 * A smoke of every resource through `/v1` and of the event flow between the services, as an
 * integrator drives them: what must keep working while the mesh runs two releases side by side
 * (skew.mesh.spec.ts). `short` is the part `npm test` runs for every combination of versions; the
 * whole of it runs under `npm run test:skew`. Each check that fails names its route, the answer it
 * got and the step it was part of, so a failing combination says which call broke.
 */
export type SmokeSize = 'short' | 'full';

/** A check that failed: the route (`GET /v1/events`) and the answer, for the combination's message. */
export class SmokeFailure extends Error {
  constructor(
    message: string,
    readonly route?: string,
  ) {
    super(message);
  }
}

const EVENT_WAIT_MS = 60_000;

export type Call = ReturnType<typeof api>;

/** Calls `method path` and fails with the route and the answer unless it answers `status`. */
async function expectStatus(call: Call, status: number, method: string, path: string, body?: unknown): Promise<any> {
  const response = await call(method, path, body);
  if (response.status !== status) {
    throw new SmokeFailure(`${method} ${path.split('?')[0]} answered ${response.status} (expected ${status}): ${JSON.stringify(response.body).slice(0, 500)}`, routeOf(method, path));
  }
  return response.body;
}

/** `GET /v1/events/evt_123?x=1` → `GET /v1/events`: the route up to its first id, as commit messages name it. */
function routeOf(method: string, path: string): string {
  const segments = path.split('?')[0].split('/');
  const firstId = segments.findIndex((segment) => /^[a-z]+_[A-Za-z0-9]+$/.test(segment));
  return `${method} ${(firstId === -1 ? segments : segments.slice(0, firstId)).join('/')}`;
}

/** Polls until `check` answers something, else fails naming what was awaited and the last value read. */
async function waitFor<T>(what: string, check: () => Promise<{ done: T | undefined; seen: unknown }>): Promise<T> {
  let seen: unknown;
  try {
    return await eventually(async () => {
      const outcome = await check();
      seen = outcome.seen;
      return outcome.done;
    }, EVENT_WAIT_MS, what);
  } catch {
    throw new SmokeFailure(`${what}: not within ${EVENT_WAIT_MS / 1000} s; last seen ${JSON.stringify(seen).slice(0, 500)}`);
  }
}

/** A payer on the sandbox payer page: GET it for the CSRF cookie and token, then approve as the page's form does. */
async function approveOnPayerPage(mesh: Mesh, redirectUrl: string): Promise<void> {
  const page = await fetch(redirectUrl);
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (page.status !== 200 || !cookie || !csrf) throw new SmokeFailure(`GET /sandbox/pay/:token answered ${page.status} without the form's cookie and token`);
  const answer = await fetch(redirectUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ decision: 'approve', csrf }).toString(),
  });
  if (answer.status !== 303) throw new SmokeFailure(`POST /sandbox/pay/:token (approve) answered ${answer.status} (expected 303): ${(await answer.text()).slice(0, 300)}`);
}

/**
 * A payer on an invoice's hosted payment page who ticks "save this number" and pays: the form
 * posted as the page's own (its cookie and CSRF token), then Approve on the sandbox payer page.
 */
async function payOnPaymentPageSaving(mesh: Mesh, paymentUrl: string): Promise<void> {
  const page = await fetch(paymentUrl);
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (page.status !== 200 || !cookie || !csrf) throw new SmokeFailure(`GET /pay/:token answered ${page.status} without the form's cookie and token`);
  const answer = await fetch(paymentUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: mesh.baseUrl },
    body: new URLSearchParams({ csrf, provider: 'MTN_MOMO_ZMB', phone_number: SANDBOX_MAGIC_NUMBERS.succeed, save_method: 'yes' }).toString(),
  });
  if (answer.status !== 303) throw new SmokeFailure(`POST /pay/:token (save ticked) answered ${answer.status} (expected 303): ${(await answer.text()).slice(0, 300)}`);
  await approveOnPayerPage(mesh, answer.headers.get('location')!);
}

/**
 * What a payer who ticks "save this number" on the payment page gets in a mixed mesh
 * (docs/operations/upgrades.md#request-fields-an-older-service-does-not-know): `saved` when the
 * gateway and payments both save from pages; `paid` otherwise — the payment is taken either way.
 */
export type PageSave = 'saved' | 'paid';

/** What a smoke created, for reading back once every app is new (skew.mesh.spec.ts). */
export interface SmokeResources {
  label: string;
  customer: string;
  paidInvoice: string;
}

/**
 * The events API's view of one resource: `GET /v1/events?resource=` answers its events and only
 * them, and `GET /v1/events/:id` each of them. Fails unless `type` is among them.
 */
export async function expectEventsOf(call: Call, resource: string, type: string): Promise<void> {
  const listed = await expectStatus(call, 200, 'GET', `/v1/events?resource=${resource}&limit=100`);
  const events = (listed.data ?? []) as { id: string; type: string; data: { object?: { id?: string } } }[];
  const others = events.filter((event) => event.data?.object?.id !== resource);
  if (others.length > 0) {
    throw new SmokeFailure(`GET /v1/events?resource=${resource} answered ${others.length} of ${events.length} events about other resources (e.g. ${others[0].type} ${others[0].data?.object?.id}): the resource filter was not applied`, 'GET /v1/events');
  }
  const wanted = events.find((event) => event.type === type);
  if (!wanted) throw new SmokeFailure(`GET /v1/events?resource=${resource} has no ${type} (it answered ${JSON.stringify(events.map((event) => event.type))})`, 'GET /v1/events');
  const read = await expectStatus(call, 200, 'GET', `/v1/events/${wanted.id}`);
  if (read.id !== wanted.id) throw new SmokeFailure(`GET /v1/events/:id answered ${read.id} for ${wanted.id}`);
}

/**
 * What the events API answers in a mixed mesh: `works`; `absent` behind a gateway released before
 * it; `unavailable` (503 service_unavailable, docs/api/events.md) with the gateway ahead of a
 * webhook-dispatch that cannot apply its filters.
 */
export type EventsApi = 'works' | 'absent' | 'unavailable';
/**
 * `POST /v1/credit-notes` (docs/api/credit-notes.md#upgrades): `works` with this checkout's gateway,
 * payments and invoicing; `unavailable` (503 credit_notes_unavailable) with this gateway and an
 * older payments or invoicing; `absent` (404) with a released gateway that has no such route.
 */
export type CreditNotesApi = 'works' | 'absent' | 'unavailable';

/**
 * Runs the smoke with a key of `mesh`; `label` names what it creates. Deliveries are awaited at
 * `receiver`, on an endpoint the smoke creates for itself.
 */
export async function runSmoke(
  mesh: Mesh,
  key: string,
  receiver: WebhookReceiver,
  label: string,
  size: SmokeSize,
  eventsApi: EventsApi,
  pageSave: PageSave,
  creditNotesApi: CreditNotesApi,
  /** Told what the smoke created as soon as it exists, so a smoke that fails later still leaves it to read back. */
  record: (resources: SmokeResources) => void,
): Promise<void> {
  const call = api(mesh, key);
  const full = size === 'full';
  const suffix = randomBytes(4).toString('hex');
  const hookPath = `/skew/${label.replace(/[^a-z0-9]+/gi, '-')}-${suffix}`;

  // Webhooks: an endpoint of this run's own, at a real receiver.
  const endpoint = await expectStatus(call, 201, 'POST', '/v1/webhooks', { url: `${receiver.url}${hookPath}`, events: ['customer.created', 'invoice.paid'] });

  // Customers.
  const customer = await expectStatus(call, 201, 'POST', '/v1/customers', { name: `Skew ${label}`, email: `skew-${suffix}@example.com` });
  if (full) await expectStatus(call, 200, 'GET', `/v1/customers/${customer.id}`);

  // Plans (a metered component for usage), add-ons, coupons and a promotion code.
  const plan = await expectStatus(call, 201, 'POST', '/v1/plans', { name: `Skew ${label}`, pricing_model: 'flat_rate', amount_monthly: 1_000, currency: 'zmw' });
  let addon: { id: string } | undefined;
  let code: string | undefined;
  if (full) {
    await expectStatus(call, 201, 'POST', `/v1/plans/${plan.id}/price-components`, { type: 'metered', name: 'API calls', metric_name: 'api_calls', unit_amount: 2, included_quantity: 100 });
    await expectStatus(call, 200, 'GET', `/v1/plans/${plan.id}`);
    addon = await expectStatus(call, 201, 'POST', '/v1/addons', { name: `Support ${label}`, price_monthly: 200, currency: 'zmw' });
    const coupon = await expectStatus(call, 201, 'POST', '/v1/coupons', { name: `Ten ${label}`, type: 'percentage', value: 10, duration: 'once' });
    code = `SKEW${suffix}`.toUpperCase();
    await expectStatus(call, 201, 'POST', '/v1/promotion-codes', { code, coupon: coupon.id, max_redemptions: 10 });
  }

  // Subscriptions, and the invoice the billing clock raises for the first period (subscription → invoicing).
  const subscription = await expectStatus(call, 201, 'POST', '/v1/subscriptions', {
    customer: customer.id,
    plan: plan.id,
    billing_interval: 'monthly',
    ...(addon ? { add_ons: [{ addon: addon.id }] } : {}),
    ...(code ? { promotion_code: code } : {}),
  });
  if (subscription.status !== 'active') throw new SmokeFailure(`POST /v1/subscriptions: status ${subscription.status}, expected active`);
  const periodInvoice = await waitFor('the subscription\'s first invoice (GET /v1/invoices?subscription=)', async () => {
    const listed = await call('GET', `/v1/invoices?subscription=${subscription.id}`);
    return { done: listed.body?.data?.[0], seen: listed };
  });
  // 1 000 for the plan and 200 for the add-on, 10 % off: each service's part of the total arrived.
  const expectedTotal = full ? 1_080 : 1_000;
  if (periodInvoice.total !== expectedTotal || periodInvoice.currency !== 'zmw') {
    throw new SmokeFailure(`GET /v1/invoices?subscription=: the first invoice's total is ${periodInvoice.total} ${periodInvoice.currency}, expected ${expectedTotal} zmw`);
  }

  // Invoices and a sandbox payment: approved on the payer page, the invoice paid (payments → invoicing).
  const invoice = await expectStatus(call, 201, 'POST', '/v1/invoices', { customer: customer.id, amount: 5_000, currency: 'zmw', description: `Skew ${label}`, status: 'open' });
  const payment = await expectStatus(call, 201, 'POST', '/v1/payments/initiate', { invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
  await approveOnPayerPage(mesh, payment.redirectUrl);
  await waitFor('the paid invoice (GET /v1/invoices/:id status paid)', async () => {
    const read = await call('GET', `/v1/invoices/${invoice.id}`);
    return { done: read.body?.status === 'paid' ? true : undefined, seen: read };
  });
  record({ label, customer: customer.id, paidInvoice: invoice.id });

  // The same customer pays a second invoice on its hosted page, "save this number" ticked: paid whatever the releases, saved once both sides can.
  const onPage = await expectStatus(call, 201, 'POST', '/v1/invoices', { customer: customer.id, amount: 700, currency: 'zmw', description: `Skew page ${label}`, status: 'open' });
  await payOnPaymentPageSaving(mesh, onPage.payment_url);
  await waitFor('the invoice paid on its page (GET /v1/invoices/:id status paid)', async () => {
    const read = await call('GET', `/v1/invoices/${onPage.id}`);
    return { done: read.body?.status === 'paid' ? true : undefined, seen: read };
  });
  if (pageSave === 'saved') {
    const methods = await expectStatus(call, 200, 'GET', `/v1/customers/${customer.id}/payment-methods`);
    const sources = (methods.data ?? []).map((method: { consent: { source: string }; default: boolean }) => `${method.consent.source} ${method.default}`);
    if (sources.join() !== 'payment_page true') throw new SmokeFailure(`GET /v1/customers/:id/payment-methods: ${JSON.stringify(sources)}, expected the number saved from the page as the default`, 'GET /v1/customers/:id/payment-methods');
  }
  if (full) {
    const read = await expectStatus(call, 200, 'GET', `/v1/payments/${payment.id}`);
    if (read.status !== 'succeeded') throw new SmokeFailure(`GET /v1/payments/:id: status ${read.status}, expected succeeded`);
  }

  // Webhook deliveries of this run's events, signed, at the receiver.
  await waitFor(`customer.created and invoice.paid delivered at ${hookPath}`, async () => {
    const arrived = (await receiver.received(hookPath)).map((request) => JSON.parse(request.body));
    const ids = arrived.map((event) => `${event.type} ${event.data?.object?.id}`);
    const done = ids.includes(`customer.created ${customer.id}`) && ids.includes(`invoice.paid ${invoice.id}`);
    return { done: done ? true : undefined, seen: ids };
  });
  // The events API: the same envelopes, read back by resource.
  if (eventsApi === 'works') await expectEventsOf(call, customer.id, 'customer.created');
  if (eventsApi === 'unavailable') {
    for (const path of [`/v1/events?resource=${customer.id}`, '/v1/events/evt_anything']) {
      const answer = await expectStatus(call, 503, 'GET', path);
      if (answer.error?.code !== 'service_unavailable') throw new SmokeFailure(`GET ${path.split('?')[0]}: code ${answer.error?.code}, expected service_unavailable`, 'GET /v1/events');
    }
  }
  // Credit notes that move no money: an open invoice credited in full is paid, or the route says why not, crediting nothing.
  const credited = await expectStatus(call, 201, 'POST', '/v1/invoices', { customer: customer.id, amount: 700, currency: 'zmw', description: `Skew credit ${label}`, status: 'open' });
  const creditStatus = { works: 201, unavailable: 503, absent: 404 }[creditNotesApi];
  const creditNote = await expectStatus(call, creditStatus, 'POST', '/v1/credit-notes', { invoice: credited.id, reason: 'order_change' });
  if (creditNotesApi === 'unavailable' && creditNote.error?.code !== 'credit_notes_unavailable') {
    throw new SmokeFailure(`POST /v1/credit-notes: code ${creditNote.error?.code}, expected credit_notes_unavailable`, 'POST /v1/credit-notes');
  }
  const creditedNow = await expectStatus(call, 200, 'GET', `/v1/invoices/${credited.id}`);
  const expectedStatus = creditNotesApi === 'works' ? 'paid' : 'open';
  if (creditedNow.status !== expectedStatus) throw new SmokeFailure(`GET /v1/invoices/:id after POST /v1/credit-notes: status ${creditedNow.status}, expected ${expectedStatus}`, 'POST /v1/credit-notes');
  if (!full) return;
  await waitFor('the deliveries recorded as succeeded (GET /v1/webhooks/:id/deliveries)', async () => {
    const listed = await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`);
    const statuses = (listed.body?.data ?? []).map((delivery: { status: string }) => delivery.status);
    return { done: statuses.length >= 2 && statuses.every((status: string) => status === 'succeeded') ? true : undefined, seen: listed };
  });

  // Refunds: the paid invoice refunded in full with a credit note.
  await expectStatus(call, 201, 'POST', '/v1/refunds', { invoice_id: invoice.id, reason: 'requested_by_customer' });
  await waitFor('the refunded invoice (GET /v1/invoices/:id status refunded)', async () => {
    const read = await call('GET', `/v1/invoices/${invoice.id}`);
    return { done: read.body?.status === 'refunded' ? true : undefined, seen: read };
  });

  // Usage on the subscription's metered component.
  await expectStatus(call, 201, 'POST', '/v1/usage', { subscription: subscription.id, metric_name: 'api_calls', quantity: 7, idempotency_key: `skew-${suffix}` });
  const summary = await expectStatus(call, 200, 'GET', `/v1/usage/summary?subscription=${subscription.id}`);
  const apiCalls = summary.metrics?.find((metric: { metric_name: string }) => metric.metric_name === 'api_calls');
  if (apiCalls?.total !== 7) throw new SmokeFailure(`GET /v1/usage/summary: api_calls total ${apiCalls?.total}, expected 7`);

  // Wallets: one per customer and currency, a top-up (an invoice with its payment link), the ledger.
  const wallet = await expectStatus(call, 201, 'POST', '/v1/wallets', { customer: customer.id, currency: 'zmw' });
  const topUp = await expectStatus(call, 201, 'POST', `/v1/wallets/${wallet.id}/top-ups`, { amount: 2_000 });
  if (!topUp.invoice) throw new SmokeFailure(`POST /v1/wallets/:id/top-ups: no invoice in ${JSON.stringify(topUp).slice(0, 300)}`);
  await expectStatus(call, 200, 'GET', `/v1/wallets/${wallet.id}/transactions`);

  // Lists of each resource answer.
  for (const path of ['/v1/customers', '/v1/plans', '/v1/addons', '/v1/coupons', '/v1/subscriptions', '/v1/invoices', '/v1/payments', '/v1/refunds', '/v1/wallets', '/v1/webhooks']) {
    await expectStatus(call, 200, 'GET', `${path}?limit=1`);
  }
}
