import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';
import { builtReleases } from './skew';

/**
 * Cursor paging through `/v1` (docs/api/conventions.md#pagination): lists walked with
 * `starting_after` forwards and `ending_before` backwards while rows are being inserted, with no
 * item twice and none skipped; the 400s of mixed or unknown cursors; and an older service, which
 * ignores cursors, refused with a 503 rather than answering page one.
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
let call: ReturnType<typeof api>;
let plan: string;
let endpoint: string;

const PAGE = 4;
/** Events and deliveries come through Kafka, whose consumers on a shared broker may take a while to join. */
const EVENTS_TIMEOUT_MS = 90_000;

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Paging Co'));
  call = api(mesh, keys.test);
  const hook = await call('POST', '/v1/webhooks', { url: `${receiver.url}/hooks`, events: ['customer.created'] });
  expect(hook.status).toBe(201);
  endpoint = hook.body.id;
  const created = await call('POST', '/v1/plans', { name: 'Team', pricing_model: 'flat_rate', amount_monthly: 1_000 });
  expect(created.status).toBe(201);
  plan = created.body.id;
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

async function post(path: string, body: unknown): Promise<string> {
  const response = await call('POST', path, body);
  expect([path, response.status]).toEqual([path, 201]);
  return response.body.id as string;
}

const newCustomer = (n: number) => post('/v1/customers', { name: `Customer ${n}`, email: `c${n}@example.com` });
const newInvoice = async (customer: string, n: number) => post('/v1/invoices', { customer, amount: 1_000 + n, description: `Work ${n}`, due_date: '2031-01-31' });
const newSubscription = async (customer: string) => post('/v1/subscriptions', { customer, plan, billing_interval: 'monthly', trial_days: 14 });

/** Every id of a list, newest first, read by offset while nothing is being written. */
async function wholeList(path: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await call('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&offset=${offset}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.data.map((item: { id: string }) => item.id));
    if (!page.body.has_more) return ids;
  }
}

/**
 * Walks a list by cursor, one page of PAGE at a time, calling `between` after each page (where the
 * test inserts rows). Forwards: from page one with `starting_after`. Backwards: from the oldest
 * item with `ending_before`, each page still newest first. Answers the ids in list order.
 */
async function walk(path: string, direction: 'forwards' | 'backwards', between: () => Promise<void>, from?: string): Promise<string[]> {
  const pages: string[][] = [];
  const join = path.includes('?') ? '&' : '?';
  let cursor = from;
  for (;;) {
    const query = cursor === undefined ? `limit=${PAGE}` : `limit=${PAGE}&${direction === 'forwards' ? 'starting_after' : 'ending_before'}=${cursor}`;
    const page = await call('GET', `${path}${join}${query}`);
    expect([query, page.status]).toEqual([query, 200]);
    const ids: string[] = page.body.data.map((item: { id: string }) => item.id);
    expect(ids.length).toBeLessThanOrEqual(PAGE);
    pages.push(ids);
    await between();
    if (!page.body.has_more || ids.length === 0) break;
    cursor = direction === 'forwards' ? ids[ids.length - 1] : ids[0];
  }
  return direction === 'forwards' ? pages.flat() : pages.reverse().flat();
}

/** No id twice; every id of `before` present; in the list's order (`after`, read once writes stopped). */
function expectNoDuplicateNoGap(walked: string[], before: string[], after: string[]) {
  expect(new Set(walked).size).toBe(walked.length);
  expect(before.filter((id) => !walked.includes(id))).toEqual([]);
  expect(walked).toEqual(after.filter((id) => walked.includes(id)));
}

/** Walks `path` both ways while `insert` adds rows after every page; checks each walk against the whole list. */
async function pageWhileInserting(path: string, insert: () => Promise<unknown>, settled: (before: string[]) => Promise<string[]> = () => wholeList(path)) {
  const before = await wholeList(path);
  expect(before.length).toBeGreaterThan(2 * PAGE);
  let inserted = 0;
  const between = async () => {
    await insert();
    inserted += 1;
  };

  const forwards = await walk(path, 'forwards', between);
  const middle = await settled(before);
  expectNoDuplicateNoGap(forwards, before, middle);
  // Forwards from page one: rows inserted meanwhile are newer than page one, so none shows.
  expect(forwards).toEqual(before);

  const oldest = middle[middle.length - 1]!;
  const backwards = await walk(path, 'backwards', between, oldest);
  const after = await settled(middle);
  // Backwards towards the newest: the rows inserted meanwhile are reached too, each once.
  expectNoDuplicateNoGap(backwards, middle.slice(0, -1), after);
  expect(backwards).not.toContain(oldest);
  expect(inserted).toBeGreaterThan(4);
}

describe('cursor paging on /v1 lists while rows are inserted', () => {
  let customers: string[];
  /** Customers created so far: each makes one customer.created event and one delivery. */
  let counter = 0;

  beforeAll(async () => {
    customers = [];
    for (let n = 0; n < 3 * PAGE + 1; n++) customers.push(await newCustomer(counter++));
  }, 120_000);

  it('customers', async () => {
    await pageWhileInserting('/v1/customers', () => newCustomer(counter++));
  }, 120_000);

  it('invoices', async () => {
    for (let n = 0; n < 3 * PAGE; n++) await newInvoice(customers[n % customers.length]!, n);
    let invoices = 0;
    await pageWhileInserting('/v1/invoices', () => newInvoice(customers[0]!, invoices++));
  }, 120_000);

  it('subscriptions', async () => {
    for (let n = 0; n < 3 * PAGE; n++) await newSubscription(customers[n % customers.length]!);
    await pageWhileInserting('/v1/subscriptions', () => newSubscription(customers[1]!));
  }, 120_000);

  // Events and deliveries arrive through Kafka: the whole list is read once it has stopped growing.
  const settledList = (path: string, expectedMore: (before: string[]) => number) => async (before: string[]) =>
    eventually(async () => {
      const ids = await wholeList(path);
      return ids.length >= expectedMore(before) && ids;
    }, EVENTS_TIMEOUT_MS, `${path} to hold every item`);

  it('events (many share one second of `created`: receivedAt and id break the tie)', async () => {
    const before = (await eventually(async () => {
      const ids = await wholeList('/v1/events?type=customer.created');
      return ids.length >= counter && ids;
    }, EVENTS_TIMEOUT_MS, `${counter} customer.created events`)).length;
    let added = 0;
    await pageWhileInserting('/v1/events?type=customer.created', async () => {
      await newCustomer(counter++);
      added += 1;
    }, settledList('/v1/events?type=customer.created', () => before + added));
  }, 240_000);

  it('webhook deliveries', async () => {
    const path = `/v1/webhooks/${endpoint}/deliveries`;
    const before = (await eventually(async () => {
      const ids = await wholeList(path);
      return ids.length >= counter && ids;
    }, EVENTS_TIMEOUT_MS, `${counter} deliveries`)).length;
    let added = 0;
    await pageWhileInserting(path, async () => {
      await newCustomer(counter++);
      added += 1;
    }, settledList(path, () => before + added));
  }, 240_000);
});

describe('cursor rules', () => {
  let customer: string;
  beforeAll(async () => {
    customer = (await wholeList('/v1/customers'))[0]!;
  });

  it('refuses a cursor with offset, and both cursors together, with a 400 naming the parameter', async () => {
    const withOffset = await call('GET', `/v1/customers?starting_after=${customer}&offset=0`);
    expect([withOffset.status, withOffset.body.error.param]).toEqual([400, 'starting_after']);
    const before = await call('GET', `/v1/customers?ending_before=${customer}&offset=10`);
    expect([before.status, before.body.error.param]).toEqual([400, 'ending_before']);
    const both = await call('GET', `/v1/customers?starting_after=${customer}&ending_before=${customer}`);
    expect([both.status, both.body.error.param, both.body.error.message]).toEqual([400, 'ending_before', 'Received both starting_after and ending_before: pass only one']);
  });

  it("answers an unknown id, another type's id and another account's id with 400 resource_missing, as Stripe does", async () => {
    const other = await mesh.createAccount('Elsewhere');
    const foreign = (await api(mesh, other.keys.test)('POST', '/v1/customers', { name: 'Not yours' })).body.id as string;
    const invoice = (await wholeList('/v1/invoices'))[0]!;
    const live = (await api(mesh, keys.live)('POST', '/v1/customers', { name: 'Live mode' })).body.id as string;
    for (const id of ['cus_doesnotexist', invoice, foreign, live]) {
      const answer = await call('GET', `/v1/customers?starting_after=${id}`);
      expect([id, answer.status, answer.body.error]).toEqual([id, 400, expect.objectContaining({ type: 'invalid_request_error', code: 'resource_missing', param: 'starting_after', message: `No such customer: '${id}'` })]);
    }
    const backwards = await call('GET', '/v1/customers?ending_before=cus_doesnotexist');
    expect([backwards.status, backwards.body.error.param]).toEqual([400, 'ending_before']);
  });

  it('pages the lists the gateway holds whole (a subscription\'s add-ons) by cursor with the same rules', async () => {
    const subscription = (await wholeList('/v1/subscriptions'))[0]!;
    const unknown = await call('GET', `/v1/subscriptions/${subscription}/addons?starting_after=addon_nope`);
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([400, 'resource_missing', 'starting_after']);
  });

  it('answers the last page with has_more false and an empty page after the oldest item', async () => {
    const ids = await wholeList('/v1/customers');
    const last = await call('GET', `/v1/customers?limit=2&starting_after=${ids[ids.length - 3]}`);
    expect([last.body.data.map((item: { id: string }) => item.id), last.body.has_more]).toEqual([ids.slice(-2), false]);
    const after = await call('GET', `/v1/customers?starting_after=${ids[ids.length - 1]}`);
    expect([after.status, after.body.data, after.body.has_more]).toEqual([200, [], false]);
    const first = await call('GET', `/v1/customers?limit=2&ending_before=${ids[2]}`);
    expect([first.body.data.map((item: { id: string }) => item.id), first.body.has_more]).toEqual([ids.slice(0, 2), false]);
  });
});

describe('every list of the document', () => {
  it('applies a cursor: an unknown starting_after is a 400 resource_missing, not page one (nor a 503 from an ignored cursor)', async () => {
    const document = (await (await fetch(`${mesh.baseUrl}/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters?: { name: string }[] } }> };
    const customer = (await wholeList('/v1/customers'))[0]!;
    const subscription = (await wholeList('/v1/subscriptions'))[0]!;
    const wallet = await post('/v1/wallets', { customer, currency: 'zmw' });
    const salesLink = await post('/v1/sales-links', { kind: 'plan', title: 'Fibre 50 at home', plan_id: plan, billing_interval: 'monthly' });
    const parents: Record<string, string> = {
      '/v1/plans/{id}/price-components': plan, '/v1/customers/{id}/payment-methods': customer, '/v1/customers/{id}/balance-transactions': customer, '/v1/subscriptions/{id}/addons': subscription,
      '/v1/webhooks/{id}/deliveries': endpoint, '/v1/wallets/{id}/transactions': wallet, '/v1/sales-links/{id}/checkouts': salesLink,
    };
    const required: Record<string, string> = { '/v1/usage': `subscription=${subscription}&` };
    const lists = Object.entries(document.paths).filter(([, item]) => item.get?.parameters?.some((parameter) => parameter.name === 'starting_after')).map(([path]) => path);
    expect(lists.length).toBeGreaterThanOrEqual(23);
    const answers = [];
    for (const path of lists) {
      const url = path.replace('{id}', parents[path] ?? 'missing_parent');
      const answer = await call('GET', `${url}?${required[path] ?? ''}starting_after=zz_unknown`);
      answers.push([path, answer.status, answer.body.error?.code, answer.body.error?.param]);
    }
    expect(answers).toEqual(lists.map((path) => [path, 400, 'resource_missing', 'starting_after']));
  }, 120_000);
});

describe('a service that predates cursors', () => {
  it('is refused with 503 cursor_paging_unavailable instead of answering page one as if it were the next', async () => {
    const releases = await builtReleases();
    const ids = await wholeList('/v1/customers');
    await mesh.replace('subscription', releases.subscription.root);
    try {
      // Offset paging still works against it.
      expect((await call('GET', '/v1/customers?limit=2')).status).toBe(200);
      const answer = await call('GET', `/v1/customers?limit=2&starting_after=${ids[0]}`);
      expect([answer.status, answer.body.error.code]).toEqual([503, 'cursor_paging_unavailable']);
    } finally {
      await mesh.replace('subscription');
    }
    const answer = await call('GET', `/v1/customers?limit=2&starting_after=${ids[0]}`);
    expect([answer.status, answer.body.data.map((item: { id: string }) => item.id)]).toEqual([200, ids.slice(1, 3)]);
  }, 180_000);
});
