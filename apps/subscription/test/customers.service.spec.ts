import * as grpc from '@grpc/grpc-js';
import { type ServiceClient, subscriptionV1 } from '@recur/contracts';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type AppProcess, createTestDatabase, grpcFailure, REPO_ROOT, sleep, startServiceUnderTest } from '@recur/testing';
import type { JsonObject } from '@bufbuild/protobuf';
import { decodeInternalEvent, decodePublicEvent } from '@recur/messaging';
import { Client } from 'pg';

/**
 * The subscription service as its own process, on a real PostgreSQL database,
 * exercised through its gRPC surface only.
 */
const tenant = { accountId: 'acct_test', livemode: false };
let app: AppProcess;
let client: ServiceClient<typeof subscriptionV1.SubscriptionService>;
let databaseUrl: string;
let metricsPort: number;

beforeAll(async () => {
  // Customers need no peer; the addresses are required configuration, so unreachable ones are given.
  const service = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, { CATALOG_GRPC_ADDR: '127.0.0.1:9', INVOICING_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', PAYMENTS_GRPC_ADDR: '127.0.0.1:9' });
  ({ app, client, databaseUrl, metricsPort } = service);
}, 90_000);

afterAll(async () => {
  client?.close();
  await app?.kill('SIGTERM');
});

interface OutboxRow {
  topic: string;
  type: string;
  published_at: Date | null;
  payload: JsonObject;
}

async function outboxRows(aggregateId: string): Promise<OutboxRow[]> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query('SELECT topic, type, published_at, payload FROM outbox_events WHERE key = $1 ORDER BY seq', [aggregateId])).rows;
  } finally {
    await db.end();
  }
}

/** The public events of a customer, decoded as webhook-dispatch decodes them. */
async function publicEvents(aggregateId: string) {
  const rows = (await outboxRows(aggregateId)).filter((row) => row.topic === 'recur.subscription.public');
  return rows.map((row) => decodePublicEvent(JSON.stringify(row.payload)));
}

describe('SubscriptionService customers', () => {
  it('creates and retrieves a customer', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold' } });
    expect(customer).toMatchObject({ name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold' }, livemode: false });
    expect(customer!.id).toMatch(/^cus_/);
    expect(Number(customer!.created)).toBeGreaterThan(Date.now() / 1000 - 60);
    const { customer: fetched } = await client.getCustomer({ tenant, id: customer!.id });
    expect(fetched).toEqual(customer);
  });

  it('rejects invalid fields with the offending param and stores nothing', async () => {
    const before = (await client.listCustomers({ tenant, page: { limit: 100 } })).page!.total;
    expect(await grpcFailure(client.createCustomer({ tenant, name: 'Ada', email: 'nope' }))).toEqual({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'parameter_invalid', param: 'email' });
    expect(await grpcFailure(client.createCustomer({ tenant, name: ' ', email: 'a@b.co' }))).toMatchObject({ param: 'name' });
    expect(await grpcFailure(client.createCustomer({ name: 'Ada', email: 'a@b.co' }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, errorCode: 'tenant_missing' });
    expect((await client.listCustomers({ tenant, page: { limit: 100 } })).page!.total).toBe(before);
  });

  it('answers a repeated request id with the first customer, even concurrently', async () => {
    const requestId = `req_${Date.now()}`;
    const results = await Promise.all(Array.from({ length: 6 }, () => client.createCustomer({ tenant, name: 'Once', email: 'once@example.com', requestId })));
    expect(new Set(results.map((result) => result.customer!.id)).size).toBe(1);
    const rows = await outboxRows(results[0].customer!.id);
    expect(rows.map((row) => row.type)).toEqual(['recur.subscription.v1.CustomerCreated', 'customer.created']);
  });

  it('keeps tenants apart: another app or account sees nothing', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Mine', email: 'mine@example.com' });
    for (const other of [{ accountId: tenant.accountId, livemode: true }, { accountId: 'acct_other', livemode: false }]) {
      expect(await grpcFailure(client.getCustomer({ tenant: other, id: customer!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND, errorCode: 'resource_missing' });
      expect(await grpcFailure(client.updateCustomer({ tenant: other, id: customer!.id, name: 'x' }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(await grpcFailure(client.deleteCustomer({ tenant: other, id: customer!.id }))).toMatchObject({ code: grpc.status.NOT_FOUND });
      const listed = await client.listCustomers({ tenant: other, page: { limit: 100 } });
      expect(listed.customers.map((c) => c.id)).not.toContain(customer!.id);
    }
  });

  it('keeps tenants apart in concurrent reads that share a statement: each gets its own customer, an id asked under another tenant nothing', async () => {
    const mine = (await client.createCustomer({ tenant, name: 'Batched', email: 'batched@example.com' })).customer!;
    const other = { accountId: 'acct_other', livemode: false };
    const theirs = (await client.createCustomer({ tenant: other, name: 'Theirs', email: 'theirs@example.com' })).customer!;
    const reads = await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        client.getCustomer({ tenant, id: mine.id }).then(({ customer }) => customer!.name),
        grpcFailure(client.getCustomer({ tenant: other, id: mine.id })).then((failure) => failure.code),
        client.getCustomer({ tenant: other, id: theirs.id }).then(({ customer }) => customer!.name),
        grpcFailure(client.getCustomer({ tenant: { ...tenant, livemode: i % 2 === 0 }, id: theirs.id })).then((failure) => failure.code),
      ]).flat(),
    );
    expect(reads).toEqual(Array.from({ length: 8 }, () => ['Batched', grpc.status.NOT_FOUND, 'Theirs', grpc.status.NOT_FOUND]).flat());
  });

  it('pages newest first with a total, and rejects windows out of bounds', async () => {
    const pageTenant = { accountId: `acct_paging_${Date.now()}`, livemode: false };
    const created = [];
    for (const name of ['first', 'second', 'third']) created.push((await client.createCustomer({ tenant: pageTenant, name, email: `${name}@example.com` })).customer!);
    const firstPage = await client.listCustomers({ tenant: pageTenant, page: { limit: 2, offset: 0 } });
    expect(firstPage.page).toMatchObject({ total: 3, hasMore: true });
    const secondPage = await client.listCustomers({ tenant: pageTenant, page: { limit: 2, offset: 2 } });
    expect(secondPage.page).toMatchObject({ total: 3, hasMore: false });
    const names = [...firstPage.customers, ...secondPage.customers].map((c) => c.name);
    expect(names).toEqual(['third', 'second', 'first']);
    expect((await client.listCustomers({ tenant: pageTenant, page: { limit: 5 }, email: 'second@example.com' })).customers.map((c) => c.name)).toEqual(['second']);
    expect(await grpcFailure(client.listCustomers({ tenant: pageTenant, page: { limit: 101 } }))).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, param: 'limit' });
  });

  it('updates given fields, merges metadata, and records previous attributes in the event', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Old', email: 'old@example.com', metadata: { a: '1', b: '2' } });
    const { customer: updated } = await client.updateCustomer({ tenant, id: customer!.id, name: 'New', metadata: { a: '', c: '3' } });
    expect(updated).toMatchObject({ name: 'New', email: 'old@example.com', metadata: { b: '2', c: '3' } });
    const events = await publicEvents(customer!.id);
    expect(events.map((event) => event.type)).toEqual(['customer.created', 'customer.updated']);
    expect(events[1].data).toMatchObject({ object: { name: 'New' }, previous_attributes: { name: 'Old', metadata: { a: '1', b: '2' } } });
  });

  it('soft-deletes: still retrievable, gone from lists, frozen', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Gone', email: 'gone@example.com' });
    const { customer: deleted } = await client.deleteCustomer({ tenant, id: customer!.id });
    expect(deleted!.deletedAt).toBeDefined();
    expect((await client.getCustomer({ tenant, id: customer!.id })).customer!.deletedAt).toEqual(deleted!.deletedAt);
    const listed = await client.listCustomers({ tenant, page: { limit: 100 } });
    expect(listed.customers.map((c) => c.id)).not.toContain(customer!.id);
    expect(await grpcFailure(client.updateCustomer({ tenant, id: customer!.id, name: 'Back' }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'customer_deleted' });
    expect(await grpcFailure(client.deleteCustomer({ tenant, id: customer!.id }))).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, errorCode: 'customer_deleted' });
  });

  it('writes each change to the outbox as an integration event and a public event, on separate topics, and the relay publishes them', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Relayed', email: 'relayed@example.com' });
    await client.deleteCustomer({ tenant, id: customer!.id });
    let rows = await outboxRows(customer!.id);
    for (let attempt = 0; attempt < 50 && rows.some((row) => row.published_at === null); attempt++) {
      await sleep(100);
      rows = await outboxRows(customer!.id);
    }
    expect(rows.map((row) => [row.topic, row.type])).toEqual([
      ['recur.subscription.customers.internal', 'recur.subscription.v1.CustomerCreated'],
      ['recur.subscription.public', 'customer.created'],
      ['recur.subscription.customers.internal', 'recur.subscription.v1.CustomerDeleted'],
      ['recur.subscription.public', 'customer.deleted'],
    ]);
    expect(rows.every((row) => row.published_at !== null)).toBe(true);
    const internal = rows.filter((row) => row.topic.endsWith('.internal')).map((row) => decodeInternalEvent(JSON.stringify(row.payload)));
    expect(internal.map((event) => event.payload!.typeUrl)).toEqual(['type.googleapis.com/recur.subscription.v1.CustomerCreated', 'type.googleapis.com/recur.subscription.v1.CustomerDeleted']);
    const published = await publicEvents(customer!.id);
    expect(published[0].id).toMatch(/^evt_/);
    expect(published[0].data).toMatchObject({ object: { id: customer!.id, object: 'customer', deleted: false } });
    expect(published[1].data).toMatchObject({ object: { id: customer!.id, deleted: true } });
  });

  it('answers a repeated delete or update with the first answer, changing nothing again', async () => {
    const { customer } = await client.createCustomer({ tenant, name: 'Retried', email: 'retried@example.com' });
    const update = { tenant, id: customer!.id, name: 'Renamed', requestId: `req_update_${Date.now()}` };
    const firstUpdate = await client.updateCustomer(update);
    await client.updateCustomer({ tenant, id: customer!.id, name: 'Changed since' });
    // The same request again answers what the first call answered, not the current state.
    expect(await client.updateCustomer(update)).toEqual(firstUpdate);

    const remove = { tenant, id: customer!.id, requestId: `req_delete_${Date.now()}` };
    const firstDelete = await client.deleteCustomer(remove);
    const repeats = await Promise.all([client.deleteCustomer(remove), client.deleteCustomer(remove)]);
    expect(repeats).toEqual([firstDelete, firstDelete]);
    // Without a request id the command runs again, and a second delete is refused.
    expect(await grpcFailure(client.deleteCustomer({ tenant, id: customer!.id }))).toMatchObject({ errorCode: 'customer_deleted' });
    expect((await publicEvents(customer!.id)).map((event) => event.type)).toEqual(['customer.created', 'customer.updated', 'customer.updated', 'customer.deleted']);
  });

  it('keeps request ids apart per tenant and per RPC', async () => {
    const requestId = `req_shared_${Date.now()}`;
    const other = { accountId: 'acct_other_tenant', livemode: false };
    const mine = await client.createCustomer({ tenant, name: 'Mine', email: 'mine@example.com', requestId });
    const theirs = await client.createCustomer({ tenant: other, name: 'Theirs', email: 'theirs@example.com', requestId });
    expect(theirs.customer!.id).not.toBe(mine.customer!.id);
    const deleted = await client.deleteCustomer({ tenant, id: mine.customer!.id, requestId });
    expect(deleted.customer!.deletedAt).toBeDefined();
  });

  it('exposes Prometheus metrics of its RPCs and its outbox relay', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(text).toMatch(/recur_rpc_server_duration_seconds_count\{service="subscription",method="createCustomer",code="OK"\} [1-9]/);
    expect(text).toMatch(/recur_rpc_server_duration_seconds_count\{service="subscription",method="getCustomer",code="5"\} [1-9]/);
    expect(text).toMatch(/recur_outbox_events_published_total\{service="subscription",topic="recur.subscription.customers.internal"\} [1-9]/);
    expect(text).toMatch(/recur_outbox_events_published_total\{service="subscription",topic="recur.subscription.public"\} [1-9]/);
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await app.kill('SIGTERM')).toBe(0);
  });
});

describe('subscription migrate command', () => {
  it("applies every migration to an empty database, the app's and the platform libraries', once", async () => {
    const url = await createTestDatabase('migrate');
    const migrate = () => spawnSync(process.execPath, [join(REPO_ROOT, 'apps/subscription/dist/main.js'), 'migrate'], { env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8' });
    const first = migrate();
    expect(first.status).toBe(0);
    const folders = (dir: string) => readdirSync(join(REPO_ROOT, dir)).filter((entry) => /^\d{14}_/.test(entry));
    const expected = folders('apps/subscription/prisma/migrations');
    // The app's own, then the platform's tables from the libraries that own them, each with its history.
    const libraries = [...folders('libs/messaging/migrations').map((name) => `messaging/${name}`), ...folders('libs/persistence/migrations').map((name) => `persistence/${name}`)];
    expect(JSON.parse(first.stdout.trim().split('\n').pop()!).applied).toEqual([...expected, ...libraries]);
    const second = migrate();
    expect(second.status).toBe(0);
    expect(JSON.parse(second.stdout.trim().split('\n').pop()!).applied).toEqual([]);
    const db = new Client({ connectionString: url });
    await db.connect();
    const { rows } = await db.query('SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name');
    await db.end();
    expect(rows.map((row) => row.migration_name)).toEqual(expected);
  }, 60_000);
});
