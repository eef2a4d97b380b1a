import Ajv2020 from 'ajv/dist/2020';
import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent, InvalidRequestError, type Invoice, Recur, RecurError } from '@recur/node';
import { SANDBOX_MAGIC_NUMBERS } from '@recur/vocabulary';
import { approveSandboxPayment, eventually, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * @recur/node against the real mesh, as an integrator's program uses it: a money loop (customer,
 * plan, subscription, its first invoice paid in the sandbox, the signed invoice.paid webhook
 * verified with the SDK's re-export), paging with `for await`, typed errors, a create replayed by
 * its Idempotency-Key, and bursts over a real rate limit absorbed by honouring Retry-After.
 */
let mesh: Mesh;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

describe('@recur/node against the mesh', () => {
  it('runs the money loop: customer, plan, subscription, its invoice paid in the sandbox, a verified invoice.paid webhook', async () => {
    const { keys } = await mesh.createAccount('SDK integrator');
    const recur = new Recur(keys.test, { baseUrl: mesh.baseUrl });
    const endpoint = await recur.webhookEndpoints.create({ url: `${receiver.url}/recur`, events: ['invoice.paid'] });
    expect(endpoint.secret).toEqual(expect.any(String));

    const customer = await recur.customers.create({ name: 'Mutale Phiri', email: 'mutale@example.com' });
    const plan = await recur.plans.create({ name: 'Fibre 100', pricing_model: 'flat_rate', amount_monthly: 60_000, currency: 'zmw' });
    const subscription = await recur.subscriptions.create({ customer: customer.id, plan: plan.id, billing_interval: 'monthly' });
    expect(subscription).toMatchObject({ object: 'subscription', customer: customer.id, plan: plan.id, status: 'active', discount: null });

    // The first period is invoiced at creation: the subscription's invoice, found by paging.
    const invoice = await eventually(async () => {
      for await (const candidate of recur.invoices.list({ subscription: subscription.id, limit: 1 })) if (candidate.status === 'open') return candidate;
      return undefined;
    }, 30_000, 'the subscription’s first invoice');
    expect(invoice).toMatchObject({ customer: customer.id, subscription: subscription.id, amount_due: 60_000, currency: 'zmw' });

    const payment = await recur.payments.initiate({ invoice_id: invoice.id, phone_number: SANDBOX_MAGIC_NUMBERS.succeed, provider: 'MTN_MOMO_ZMB' });
    expect(payment).toMatchObject({ object: 'payment', status: 'pending', invoice: invoice.id });
    await approveSandboxPayment(mesh, payment.redirectUrl!);

    const paid = await eventually(async () => {
      const current: Invoice = await recur.invoices.retrieve(invoice.id);
      return current.status === 'paid' ? current : undefined;
    }, 30_000, 'the invoice paid');
    expect(paid.amount_paid).toBe(60_000);
    expect((await recur.payments.list({ invoice: invoice.id })).data.map((item) => item.status)).toEqual(['succeeded']);

    const [delivery] = await eventually(async () => {
      const received = await receiver.received('/recur');
      return received.length > 0 ? received : undefined;
    }, 30_000, 'the invoice.paid delivery');
    const event = constructEvent<{ object: Invoice; payment: string }>(delivery.body, delivery.headers, endpoint.secret!);
    expect(event).toMatchObject({ type: 'invoice.paid', livemode: false, data: { object: { id: invoice.id, status: 'paid' }, payment: payment.id } });
    expect(() => constructEvent(delivery.body, delivery.headers, 'whsec_wrong')).toThrow(/signature/);

    // The same event through the events API, filtered by resource.
    const events = await eventually(async () => {
      const page = await recur.events.list({ resource: invoice.id, type: 'invoice.paid' });
      return page.data.length > 0 ? page.data : undefined;
    }, 30_000, 'invoice.paid in the events API');
    expect(events.map((item) => item.id)).toEqual([event.id]);

    // The document's webhooks section tells the truth: the delivery and every event of the loop
    // (customer, subscription and invoice events) match their type's payload schema.
    const document = (await (await fetch(`${mesh.baseUrl}/openapi.json`)).json()) as { webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }> };
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(document, 'openapi');
    const mismatches = (payload: { type: string }) => {
      const { type } = payload;
      const validate = ajv.compile({ $ref: `openapi${document.webhooks[type].post.requestBody.content['application/json'].schema.$ref}` });
      return validate(payload) ? [] : [`${type}: ${ajv.errorsText(validate.errors)}`];
    };
    const all = await eventually(async () => {
      const listed = await recur.events.list({ limit: 100 }).toArray();
      return ['customer.created', 'subscription.created', 'invoice.created', 'invoice.paid'].every((type) => listed.some((item) => item.type === type)) ? listed : undefined;
    }, 30_000, 'the loop’s events');
    expect([JSON.parse(delivery.body) as { type: string }, ...all].flatMap(mismatches)).toEqual([]);
  });

  it('pages every item with for await, throws typed errors, and replays a create sent with the same Idempotency-Key', async () => {
    const { keys } = await mesh.createAccount('SDK paging');
    const recur = new Recur(keys.test, { baseUrl: mesh.baseUrl });
    const created = [];
    for (let index = 0; index < 7; index++) created.push(await recur.customers.create({ name: `Customer ${index}`, email: `c${index}@example.com` }));
    const listed: string[] = [];
    for await (const customer of recur.customers.list({ limit: 3 })) listed.push(customer.id);
    expect(listed).toEqual(created.map((customer) => customer.id).reverse());

    const refused = await recur.customers.create({ name: 'No e-mail' } as never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'parameter_missing', param: 'email', requestId: expect.stringMatching(/^req_/) });
    const missing = await recur.customers.retrieve('cus_doesnotexist').catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, code: 'resource_missing' });
    expect(missing).toBeInstanceOf(RecurError);

    const first = await recur.customers.create({ name: 'Once', email: 'once@example.com' }, { idempotencyKey: 'sdk-once' });
    const again = await recur.customers.create({ name: 'Once', email: 'once@example.com' }, { idempotencyKey: 'sdk-once' });
    expect(again.id).toBe(first.id);
    expect((await recur.customers.list({ limit: 100 })).data.filter((customer) => customer.email === 'once@example.com')).toHaveLength(1);
    expect(await recur.customers.update(first.id, { name: 'Twice' })).toMatchObject({ id: first.id, name: 'Twice' });
    expect(await recur.customers.del(first.id)).toMatchObject({ id: first.id, deleted: true });
  });

  it('absorbs a burst over the key’s real rate limit by waiting Retry-After: every create lands, none twice', async () => {
    const { accountId, keys } = await mesh.createAccount('SDK burst');
    const lowered = await mesh.operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app: 'sandbox', write_per_second: 2 });
    expect(lowered.status).toBe(200);
    const recur = new Recur(keys.test, { baseUrl: mesh.baseUrl, maxRetries: 8 });
    const raw = await Promise.all(Array.from({ length: 6 }, () => fetch(`${mesh.baseUrl}/v1/customers`, { method: 'POST', headers: { 'x-api-key': keys.test, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Raw', email: 'raw@example.com' }) })));
    // Without the SDK, the same burst is refused in part: the limit is real.
    expect(raw.map((response) => response.status)).toContain(429);
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const burst = await Promise.all(Array.from({ length: 6 }, (_, index) => recur.customers.create({ name: `Burst ${index}`, email: `burst${index}@example.com` })));
    expect(new Set(burst.map((customer) => customer.id)).size).toBe(6);
    const stored = (await recur.customers.list({ limit: 100 })).data.filter((customer) => customer.name.startsWith('Burst'));
    expect(stored).toHaveLength(6);
  });
});
