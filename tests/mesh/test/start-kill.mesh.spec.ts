import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedPostgresUrl } from '@recur/local-infra';
import { OUTBOX_RELAY_LOCK_KEY } from '@recur/messaging';
import { connectDatabase, eventually, queryDatabase, sleep, startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { killStack, npmStart, type StartedStack } from './npm-start';

/**
 * `npm start` on the in-process bus keeps every event through kill -9 of the whole stack (Node.js
 * and its PostgreSQL) in the middle of a burst of creates: after `npm start` again on the same data
 * folder, every customer that answered 201, and every customer that exists, has exactly one
 * customer.created delivered to a real webhook receiver. The subscription service's relay is held
 * (its lock taken) while the burst runs, so the kill lands with acknowledged customers' events
 * still in the outbox; the restart then publishes that backlog while the other apps start.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'recur-start-kill-'));
// The embedded PostgreSQL runs as another OS user when the tests run as root.
chmodSync(dataDir, 0o755);
let receiver: WebhookReceiver;
let stack: StartedStack | undefined;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  if (stack && stack.child.exitCode === null && stack.child.signalCode === null) {
    stack.child.kill('SIGTERM');
    await stack.exited;
  }
  await receiver?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const CLIENTS = 16;
const HOOK_PATH = '/hooks/kill';

function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** Every customer, through the API (those whose answer the kill cut off included). */
async function existingCustomers(base: string, key: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const response = await call(base, key, 'GET', `/v1/customers?limit=100&offset=${offset}`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: { id: string }[]; has_more: boolean };
    ids.push(...page.data.map((customer) => customer.id));
    if (!page.has_more) return ids;
  }
}

/** customer id → the distinct customer.created event ids that reached the receiver. */
async function deliveredEventIds(): Promise<Map<string, Set<string>>> {
  const byCustomer = new Map<string, Set<string>>();
  for (const arrival of await receiver.received(HOOK_PATH)) {
    const envelope = JSON.parse(arrival.body) as { id: string; type: string; data: { object: { id: string } } };
    expect(envelope.type).toBe('customer.created');
    byCustomer.set(envelope.data.object.id, (byCustomer.get(envelope.data.object.id) ?? new Set()).add(envelope.id));
  }
  return byCustomer;
}

it('delivers exactly one customer.created per customer after kill -9 of the whole npm start stack mid-burst and a restart on the same data folder', async () => {
  stack = await npmStart(dataDir, { KAFKA_BROKERS: '' });
  const key = /sandbox secret\s+(recur_test_sk_\w+)/.exec(stack.stdout())![1];
  const endpoint = await call(stack.baseUrl, key, 'POST', '/v1/webhooks', { url: `${receiver.url}${HOOK_PATH}`, events: ['customer.created'] });
  expect(endpoint.status).toBe(201);

  // Hold the subscription service's relay, as a slow relay would be, so the kill finds a backlog.
  const subscriptionDb = await connectDatabase(embeddedPostgresUrl(join(dataDir, 'postgres'), stack.ports.pg, 'recur_subscription'));
  subscriptionDb.on('error', () => undefined); // the kill takes its server away
  await subscriptionDb.query('BEGIN');
  await subscriptionDb.query('SELECT pg_advisory_xact_lock($1::bigint)', [OUTBOX_RELAY_LOCK_KEY]);

  // 16 clients, each creating customers one after another until the kill cuts them off.
  const confirmed: string[] = [];
  let killed = false;
  const base = stack.baseUrl;
  const clients = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let n = 0; !killed; n++) {
      try {
        const response = await call(base, key, 'POST', '/v1/customers', { name: `Client ${client} #${n}`, email: `c${client}n${n}@example.com` });
        if (response.status === 201) confirmed.push(((await response.json()) as { id: string }).id);
      } catch {
        return; // the kill cut this request off
      }
    }
  });
  await eventually(async () => confirmed.length >= 64, 30_000, '64 customers acknowledged');
  const backlog = await queryDatabase<{ count: number }>(
    embeddedPostgresUrl(join(dataDir, 'postgres'), stack.ports.pg, 'recur_subscription'),
    `SELECT count(*)::int AS count FROM outbox_events WHERE published_at IS NULL AND type = 'customer.created'`,
  );
  const pids = await killStack(stack);
  killed = true;
  await Promise.all(clients);
  await subscriptionDb.end().catch(() => undefined);
  expect(pids.length).toBeGreaterThan(2); // Node.js, the postmaster and its processes
  expect(backlog[0].count).toBeGreaterThan(0);

  const restartedAt = Date.now();
  stack = await npmStart(dataDir, { KAFKA_BROKERS: '' });
  const restartMs = Date.now() - restartedAt;
  const existing = await existingCustomers(stack.baseUrl, key);
  expect(existing).toEqual(expect.arrayContaining(confirmed));

  // Every customer that exists gets its delivery; those the bus lost never do.
  const allDelivered = await eventually(async () => (await deliveredEventIds()).size >= existing.length, 60_000, `a delivery for each of ${existing.length} customers`).catch(() => false);
  await sleep(2_000); // a late duplicate (a second event id for one customer) would come now
  const delivered = await deliveredEventIds();
  const lost = existing.filter((id) => !delivered.has(id));
  const lostAcknowledged = confirmed.filter((id) => !delivered.has(id));
  console.log(`npm start kill -9: ${confirmed.length} acknowledged, ${existing.length} exist, ${backlog[0].count} unpublished at the kill, restart ${restartMs} ms; lost ${lost.length} (${lostAcknowledged.length} acknowledged)`);
  expect({ allDelivered: allDelivered !== false, lost, lostAcknowledged }).toEqual({ allDelivered: true, lost: [], lostAcknowledged: [] });
  expect([...delivered.keys()].sort()).toEqual([...existing].sort());
  for (const id of existing) expect({ id, eventIds: delivered.get(id)!.size }).toEqual({ id, eventIds: 1 });
}, 240_000);
