import { createHmac, timingSafeEqual } from 'node:crypto';
import { freePort, queryDatabase, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { constructEvent } from '@recur/webhooks';
import { api, eventually, type Keys, type Mesh, sleep, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * Webhooks end to end: endpoints through the API, events from Kafka turned into signed
 * deliveries to a real receiver process, retries on its schedule, replay, and a
 * dispatcher killed in the middle of a schedule.
 */
const TIMEOUT_MS = 1_500;
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([
    startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } } }),
    startWebhookReceiver(),
  ]);
  ({ keys } = await mesh.createAccount('Webhooks'));
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

async function createEndpoint(path: string, events = ['customer.created'], key = keys.test) {
  const response = await api(mesh, key)('POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events });
  expect(response.status).toBe(201);
  return response.body as { id: string; secret: string; url: string };
}

async function createCustomer(key = keys.test) {
  const response = await api(mesh, key)('POST', '/v1/customers', { name: 'Hooked', email: 'hooked@example.com' });
  expect(response.status).toBe(201);
  return response.body as { id: string };
}

async function arrivals(path: string, count: number, timeoutMs = 30_000) {
  return eventually(async () => {
    const got = await receiver.received(path);
    return got.length >= count ? got : undefined;
  }, timeoutMs, `${count} deliveries at ${path}`);
}

async function deliveriesOf(endpointId: string) {
  const response = await call('GET', `/v1/webhooks/${endpointId}/deliveries?limit=100`);
  expect(response.status).toBe(200);
  return response.body.data as any[];
}

/** The stored schedule of an event's deliveries (webhook-dispatch's own table). */
async function scheduleOf(endpointId: string, eventId: string) {
  return queryDatabase<{ status: string; next_attempt_at: Date | null }>(
    mesh.databaseUrls['webhook-dispatch'],
    'SELECT status, next_attempt_at FROM deliveries WHERE endpoint_id = $1 AND event_id = $2',
    [endpointId, eventId],
  );
}

/** Waits for the delivery's outcome to be recorded, then answers its stored schedule. */
async function settledScheduleOf(endpointId: string, eventId: string) {
  return eventually(async () => {
    const rows = await scheduleOf(endpointId, eventId);
    return rows.every((row) => row.status !== 'pending') ? rows : undefined;
  }, 10_000, 'the delivery outcome recorded');
}

/** The receiver's own check: HMAC-SHA256 over "<timestamp>.<raw body>", constant time. */
function independentlyVerified(body: string, headers: Record<string, string>, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(`${headers['x-recur-timestamp']}.${body}`).digest();
  const received = Buffer.from(headers['x-recur-signature'].replace(/^sha256=/, ''), 'hex');
  return received.length === expected.length && timingSafeEqual(received, expected);
}

describe('webhook endpoints', () => {
  it('are created with a secret shown once, listed, updated and deleted', async () => {
    const created = await createEndpoint('/hooks/crud', ['customer.created', 'invoice.paid']);
    expect(created).toMatchObject({ object: 'webhook_endpoint', status: 'enabled', livemode: false, events: ['customer.created', 'invoice.paid'] });
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const listed = await call('GET', '/v1/webhooks');
    const mine = listed.body.data.find((endpoint: { id: string }) => endpoint.id === created.id);
    expect(mine).toBeDefined();
    expect(mine.secret).toBeUndefined();
    const updated = await call('PATCH', `/v1/webhooks/${created.id}`, { events: ['customer.deleted'], status: 'disabled' });
    expect(updated.body).toMatchObject({ events: ['customer.deleted'], status: 'disabled' });
    expect((await call('DELETE', `/v1/webhooks/${created.id}`)).body).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
    expect((await call('PATCH', `/v1/webhooks/${created.id}`, { status: 'enabled' })).status).toBe(404);
  });

  it('validate URLs and event types, and list the 23 subscribable types (the specification\'s 22 and credit_note.created)', async () => {
    const types = await call('GET', '/v1/webhooks/events');
    expect(types.body.data).toHaveLength(23);
    expect(types.body.data.map((t: { type: string }) => t.type)).toContain('credit_note.created');
    expect(types.body.data.map((t: { type: string }) => t.type)).not.toContain('webhook.test');
    const bad: [unknown, string, string][] = [
      [{ url: `${receiver.url}/x`, events: ['customer.exploded'] }, 'events[0]', 'parameter_invalid'],
      [{ url: `${receiver.url}/x`, events: ['webhook.test'] }, 'events[0]', 'parameter_invalid'],
      [{ url: `${receiver.url}/x`, events: [] }, 'events', 'parameter_invalid'],
      [{ url: 'ftp://example.com/x', events: ['customer.created'] }, 'url', 'parameter_invalid'],
      [{ url: 'not a url', events: ['customer.created'] }, 'url', 'parameter_invalid'],
    ];
    for (const [body, param, code] of bad) {
      const response = await call('POST', '/v1/webhooks', body);
      expect({ status: response.status, param: response.body.error.param, code: response.body.error.code }).toEqual({ status: 400, param, code });
    }
    // Live endpoints must use https.
    const live = await api(mesh, keys.live)('POST', '/v1/webhooks', { url: `${receiver.url}/x`, events: ['customer.created'] });
    expect(live.body.error).toMatchObject({ code: 'url_insecure', param: 'url' });
  });
});

describe('deliveries', () => {
  it('POST the signed envelope; the receiver verifies it with the library and with its own HMAC', async () => {
    const endpoint = await createEndpoint('/hooks/ok');
    const customer = await createCustomer();
    const [arrival] = await arrivals('/hooks/ok', 1);
    expect(arrival.headers['content-type']).toBe('application/json');
    expect(arrival.headers['x-recur-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(Math.abs(Number(arrival.headers['x-recur-timestamp']) - arrival.arrivedAt)).toBeLessThan(5_000);
    expect(independentlyVerified(arrival.body, arrival.headers, endpoint.secret)).toBe(true);
    expect(independentlyVerified(arrival.body, arrival.headers, 'whsec_wrong')).toBe(false);
    const event = constructEvent<{ object: { id: string } }>(arrival.body, arrival.headers, endpoint.secret);
    expect(Object.keys(JSON.parse(arrival.body)).sort()).toEqual(['created', 'data', 'id', 'livemode', 'type']);
    expect(event).toMatchObject({ type: 'customer.created', livemode: false, data: { object: { id: customer.id } } });
    expect(event.id).toMatch(/^evt_/);

    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
    }, 10_000, 'a succeeded delivery');
    expect(delivery).toMatchObject({ object: 'webhook_delivery', event: { id: event.id, type: 'customer.created' }, status: 'succeeded' });
    expect(delivery.attempts).toEqual([expect.objectContaining({ number: 1, status_code: 200, error: null, manual: false, response_excerpt: '{"received":true}' })]);

    // Replay: the same event id again, on request.
    const replay = await call('POST', `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`);
    expect(replay.status).toBe(202);
    const both = await arrivals('/hooks/ok', 2);
    expect(JSON.parse(both[1].body).id).toBe(event.id);
    expect(both[1].body).toBe(both[0].body);
    expect(independentlyVerified(both[1].body, both[1].headers, endpoint.secret)).toBe(true);
    await eventually(async () => (await deliveriesOf(endpoint.id))[0].attempts.length === 2, 10_000, 'the replay attempt');
    expect((await deliveriesOf(endpoint.id))[0].attempts[1]).toMatchObject({ number: 2, status_code: 200, manual: true });
  });

  it('retry failures about 1 s and 2 s apart, with the same event id', async () => {
    const endpoint = await createEndpoint('/hooks/flaky?fail=2');
    await createCustomer();
    const got = await arrivals('/hooks/flaky', 3, 30_000);
    expect(new Set(got.map((arrival) => JSON.parse(arrival.body).id)).size).toBe(1);
    const gaps = [got[1].arrivedAt - got[0].arrivedAt, got[2].arrivedAt - got[1].arrivedAt];
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[0]).toBeLessThan(2_500);
    expect(gaps[1]).toBeGreaterThanOrEqual(1_900);
    expect(gaps[1]).toBeLessThan(3_500);
    // After the success nothing is scheduled, and nothing comes when attempt 4 would have (4 s later).
    expect(await settledScheduleOf(endpoint.id, JSON.parse(got[2].body).id)).toEqual([{ status: 'succeeded', next_attempt_at: null }]);
    await sleep(Math.max(0, got[2].arrivedAt + 4_000 + 1_000 - Date.now()));
    expect(await receiver.received('/hooks/flaky')).toHaveLength(3);
  }, 30_000);

  it('count a receiver that never answers as failed after the timeout, and give up after 5 attempts at a dead address', async () => {
    const hanging = await createEndpoint('/hooks/hang?mode=hang');
    const deadPort = await freePort();
    const dead = (await call('POST', '/v1/webhooks', { url: `http://127.0.0.1:${deadPort}/nobody`, events: ['customer.created'] })).body;
    await createCustomer();
    const [hung] = await eventually(async () => {
      const list = await deliveriesOf(hanging.id);
      return list[0]?.attempts.length >= 1 ? list : undefined;
    }, 15_000, 'a timed-out attempt');
    expect(hung.attempts[0]).toMatchObject({ number: 1, status_code: null, error: `no answer within ${TIMEOUT_MS} ms` });
    expect(hung.attempts[0].duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(hung.status).toBe('pending');

    const [gaveUp] = await eventually(async () => {
      const list = await deliveriesOf(dead.id);
      return list[0]?.status === 'failed' ? list : undefined;
    }, 40_000, 'five failed attempts');
    expect(gaveUp.attempts.map((attempt: { number: number }) => attempt.number)).toEqual([1, 2, 3, 4, 5]);
    expect(gaveUp.attempts.every((attempt: { error: string | null }) => /ECONNREFUSED|connect/.test(attempt.error ?? ''))).toBe(true);
    const starts = gaveUp.attempts.map((attempt: { attempted_at_ms: number }) => attempt.attempted_at_ms);
    const waits = starts.slice(1).map((start: number, i: number) => start - starts[i]);
    [1_000, 2_000, 4_000, 8_000].forEach((expected, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(expected - 100);
      expect(waits[i]).toBeLessThan(expected + 1_500);
    });
  }, 90_000);

  it('send nothing to a disabled endpoint, and keep sandbox and live apart', async () => {
    const enabled = await createEndpoint('/hooks/enabled');
    const disabled = await createEndpoint('/hooks/disabled');
    await call('PATCH', `/v1/webhooks/${disabled.id}`, { status: 'disabled' });
    // A live endpoint (https) on the same account: it must only ever get live events.
    const live = await api(mesh, keys.live)('POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/live', events: ['customer.created'] });
    expect(live.status).toBe(201);

    const sandboxCustomer = await createCustomer();
    await eventually(async () => (await receiver.received('/hooks/enabled')).some((a) => JSON.parse(a.body).data.object.id === sandboxCustomer.id), 30_000, 'enabled delivery');
    // The receiver answers before the dispatcher records the attempt: wait for the record.
    const recorded = await eventually(async () => {
      const statuses = (await deliveriesOf(enabled.id)).map((delivery) => delivery.status);
      return statuses.includes('pending') ? undefined : statuses;
    }, 30_000, 'the attempt recorded');
    expect(recorded).toEqual(['succeeded']);
    expect(await receiver.received('/hooks/disabled')).toEqual([]);
    expect(await deliveriesOf(disabled.id)).toEqual([]);
    expect((await api(mesh, keys.live)('GET', `/v1/webhooks/${live.body.id}/deliveries`)).body.data).toEqual([]);
    for (const arrival of await receiver.received()) expect(JSON.parse(arrival.body).livemode).toBe(false);

    const liveCustomer = await createCustomer(keys.live);
    const liveDeliveries = await eventually(async () => {
      const list = (await api(mesh, keys.live)('GET', `/v1/webhooks/${live.body.id}/deliveries`)).body.data;
      return list.length > 0 ? list : undefined;
    }, 30_000, 'a live delivery');
    expect(liveDeliveries).toHaveLength(1);
    expect(liveDeliveries[0].livemode).toBe(true);
    const sandboxSaw = (await receiver.received()).map((a) => JSON.parse(a.body).data?.object?.id);
    expect(sandboxSaw).not.toContain(liveCustomer.id);
    // Another app's endpoint is not found.
    expect((await call('GET', `/v1/webhooks/${live.body.id}/deliveries`)).status).toBe(404);
  });

  it('send webhook.test to one endpoint only', async () => {
    const target = await createEndpoint('/hooks/test-target', ['invoice.paid']);
    await createEndpoint('/hooks/test-bystander', ['invoice.paid']);
    const queued = await call('POST', `/v1/webhooks/${target.id}/test`);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ event: { type: 'webhook.test' }, endpoint: target.id });
    const [arrival] = await arrivals('/hooks/test-target', 1);
    expect(constructEvent(arrival.body, arrival.headers, target.secret)).toMatchObject({ type: 'webhook.test', livemode: false });
    await sleep(500);
    expect(await receiver.received('/hooks/test-bystander')).toEqual([]);
  });

  it('resume a retry schedule after the dispatcher is killed with SIGKILL', async () => {
    const endpoint = await createEndpoint('/hooks/restart?fail=3');
    await createCustomer();
    // Attempt 1 is recorded (failed, attempt 2 due in about 1 s): kill the dispatcher now.
    await eventually(async () => (await deliveriesOf(endpoint.id))[0]?.attempts.length === 1, 30_000, 'first attempt recorded');
    await mesh.apps['webhook-dispatch'].kill('SIGKILL');
    await sleep(1_500);
    await mesh.apps['webhook-dispatch'].restart();
    const got = await arrivals('/hooks/restart', 4, 40_000);
    // Succeeded with nothing left scheduled (an attempt 5 would come 8 s later).
    expect(await settledScheduleOf(endpoint.id, JSON.parse(got[3].body).id)).toEqual([{ status: 'succeeded', next_attempt_at: null }]);
    expect(await receiver.received('/hooks/restart')).toHaveLength(4);
    expect(new Set(got.map((arrival) => JSON.parse(arrival.body).id)).size).toBe(1);
    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list[0]?.status === 'succeeded' ? list : undefined;
    }, 10_000, 'succeeded after restart');
    expect(delivery.attempts.map((attempt: { number: number; status_code: number }) => [attempt.number, attempt.status_code])).toEqual([[1, 500], [2, 500], [3, 500], [4, 200]]);
  }, 90_000);
});

describe('the events API', () => {
  it('lists the account\'s events newest first, as its webhooks carry them, filtered by type, time and resource; retrieves one; another app sees none', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const first = (await call('POST', '/v1/customers', { name: 'Event One', email: 'one@example.com' })).body;
    const second = (await call('POST', '/v1/customers', { name: 'Event Two', email: 'two@example.com' })).body;
    expect((await call('PATCH', `/v1/customers/${first.id}`, { name: 'Event One, renamed' })).status).toBe(200);
    const mine = await eventually(async () => {
      const list = (await call('GET', `/v1/events?created_gte=${since}&limit=100`)).body;
      const about = list.data.filter((event: { data: { object: { id: string } } }) => [first.id, second.id].includes(event.data.object.id));
      return about.length === 3 ? about : undefined;
    }, 60_000, 'three events recorded');
    // Newest first by `created` (unix seconds); events of one second come in no set order.
    const newestFirst = (events: { created: number }[]) => events.every((event, index) => index === 0 || events[index - 1].created >= event.created);
    expect(newestFirst(mine)).toBe(true);
    const pairs = (events: { type: string; data: { object: { id: string } } }[]) => events.map((event) => `${event.type} ${event.data.object.id}`).sort();
    expect(pairs(mine)).toEqual([`customer.created ${first.id}`, `customer.created ${second.id}`, `customer.updated ${first.id}`].sort());
    const updated = mine.find((event: { type: string }) => event.type === 'customer.updated');
    expect(updated).toMatchObject({ id: expect.stringMatching(/^evt_/), object: 'event', livemode: false, created: expect.any(Number), data: { object: { name: 'Event One, renamed' } } });

    const byResource = (await call('GET', `/v1/events?resource=${first.id}`)).body;
    expect(byResource).toMatchObject({ object: 'list', url: '/v1/events', total: 2 });
    expect(pairs(byResource.data)).toEqual([`customer.created ${first.id}`, `customer.updated ${first.id}`]);
    expect(newestFirst(byResource.data)).toBe(true);
    expect((await call('GET', `/v1/events?resource=${first.id}&type=customer.created`)).body.total).toBe(1);
    expect((await call('GET', `/v1/events?resource=${first.id}&created_lte=${since - 1}`)).body.total).toBe(0);

    const one = await call('GET', `/v1/events/${updated.id}`);
    expect([one.status, one.body]).toEqual([200, updated]);
    // The webhook a test sends is no event of the account's: neither listed nor retrieved.
    const endpoint = await createEndpoint('/events-api');
    const tested = await call('POST', `/v1/webhooks/${endpoint.id}/test`);
    expect(tested.status).toBeLessThan(300);
    expect((await call('GET', '/v1/events?limit=100')).body.data.filter((event: { type: string }) => event.type === 'webhook.test')).toEqual([]);

    for (const [query, param] of [['type=customer.exploded', 'type'], ['created_gte=yesterday', 'created_gte'], ['resource=cus_%20x', 'resource']]) {
      const refused = await call('GET', `/v1/events?${query}`);
      expect([query, refused.status, refused.body.error.param]).toEqual([query, 400, param]);
    }
    expect((await api(mesh, keys.live)('GET', `/v1/events/${updated.id}`)).status).toBe(404);
    expect((await api(mesh, keys.live)('GET', `/v1/events?resource=${first.id}`)).body.total).toBe(0);
    expect((await call('GET', '/v1/events/evt_nothing')).status).toBe(404);
  });
});
