import { DEFAULT_CALL_TIMEOUT_MS } from '@recur/contracts';
import { connectDatabase, queryDatabase } from '@recur/testing';
import { api, eventually, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * The Idempotency-Key promises of docs/api/conventions.md#idempotency through the gateway, against the real services.
 * A slow first request is made slow on purpose, not by luck: the test holds an exclusive
 * lock on the subscription service's customers table, so the service's work waits until
 * the test lets it go. The gateway gives a gRPC call 10 s (its deadline) before it
 * answers 503; the lost-answer test restarts it with a 2 s deadline (GATEWAY_GRPC_DEADLINE_MS),
 * shorter than the service's own 10 s transaction, so the first attempt always commits after
 * the gateway gave up.
 */
let mesh: Mesh;
let call: ReturnType<typeof api>;
let runs = 0;
const SHORT_GATEWAY_DEADLINE_MS = 2_000;

beforeAll(async () => {
  mesh = await startMesh();
  const { keys } = await mesh.createAccount('Idempotency');
  call = api(mesh, keys.test);
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await mesh?.stop();
}, 60_000);

/** A key and an e-mail no other test uses. */
function fresh(label: string) {
  runs += 1;
  return { key: `${label}-${runs}-${Date.now()}`, email: `${label}-${runs}-${Date.now()}@example.com` };
}

/** Holds the customers table until `release`: every customer read or write of the service waits. */
async function holdCustomersTable(): Promise<{ release(): Promise<void> }> {
  const client = await connectDatabase(mesh.databaseUrls.subscription);
  await client.query('BEGIN');
  await client.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
  return {
    async release() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

/** The gateway holds the key: its record exists and is locked by a running request. */
async function keyHeld(key: string) {
  return eventually(async () => {
    const rows = await queryDatabase<{ locked_at: Date | null }>(mesh.databaseUrls.gateway, 'SELECT locked_at FROM idempotency_records WHERE key = $1', [key]);
    return rows.length === 1 && rows[0].locked_at !== null;
  }, 10_000, `the gateway to hold ${key}`);
}

async function customersWithEmail(email: string) {
  return queryDatabase<{ id: string }>(mesh.databaseUrls.subscription, 'SELECT id FROM customers WHERE email = $1', [email]);
}

describe('Idempotency-Key', () => {
  it('accepts keys of 1 to 255 characters and refuses an empty or a 256-character key', async () => {
    const { email } = fresh('length');
    for (const key of ['', 'k'.repeat(256)]) {
      const refused = await call('POST', '/v1/customers', { name: 'Length', email }, { 'Idempotency-Key': key });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_invalid', param: 'Idempotency-Key' });
    }
    expect(await customersWithEmail(email)).toEqual([]);

    const longest = 'k'.repeat(255);
    const first = await call('POST', '/v1/customers', { name: 'Length', email }, { 'Idempotency-Key': longest });
    expect(first.status).toBe(201);
    const again = await call('POST', '/v1/customers', { name: 'Length', email }, { 'Idempotency-Key': longest });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const single = await call('POST', '/v1/customers', { name: 'Length', email: `x${email}` }, { 'Idempotency-Key': 'k' });
    expect(single.status).toBe(201);
  });

  it('answers a repeat while the first request still runs with 409 idempotency_key_in_progress', async () => {
    const { key, email } = fresh('in-progress');
    const table = await holdCustomersTable();
    let firstSettled = false;
    const first = call('POST', '/v1/customers', { name: 'Slow', email }, { 'Idempotency-Key': key }).finally(() => (firstSettled = true));
    try {
      await keyHeld(key);
      const repeat = await call('POST', '/v1/customers', { name: 'Slow', email }, { 'Idempotency-Key': key });
      expect(firstSettled).toBe(false);
      expect(repeat.status).toBe(409);
      expect(repeat.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_in_progress', param: 'Idempotency-Key' });
    } finally {
      await table.release();
    }
    const answered = await first;
    expect(answered.status).toBe(201);
    const replayed = await call('POST', '/v1/customers', { name: 'Slow', email }, { 'Idempotency-Key': key });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(answered.body);
    expect((await customersWithEmail(email)).map((row) => row.id)).toEqual([answered.body.id]);
  }, 60_000);

  it('does not store a 5xx: when the answer is lost after the service committed, the retry runs again and answers the customer the first attempt created', async () => {
    const { key, email } = fresh('lost-answer');
    // The gateway gives up after 2 s, while the service's transaction may wait up to 10 s for the
    // table: released after the 503, the first attempt commits, and its answer reaches no one.
    const gateway = mesh.apps.gateway;
    await gateway.kill('SIGTERM');
    await gateway.restart({ GATEWAY_GRPC_DEADLINE_MS: String(SHORT_GATEWAY_DEADLINE_MS) });
    try {
      const table = await holdCustomersTable();
      const first = call('POST', '/v1/customers', { name: 'Lost answer', email }, { 'Idempotency-Key': key });
      let failed: Awaited<typeof first>;
      try {
        await keyHeld(key);
        failed = await first;
      } finally {
        await table.release();
      }
      expect(failed.status).toBe(503);
      expect(failed.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable', request_id: failed.headers.get('request-id') });
      const [committed] = await eventually(async () => {
        const rows = await customersWithEmail(email);
        return rows.length > 0 ? rows : undefined;
      }, 10_000, 'the first attempt to commit after the gateway gave up');

      const retry = await call('POST', '/v1/customers', { name: 'Lost answer', email }, { 'Idempotency-Key': key });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.body.id).toBe(committed.id);
      expect(await customersWithEmail(email)).toEqual([{ id: committed.id }]);
      // Now the 201 is stored and replayed.
      const replayed = await call('POST', '/v1/customers', { name: 'Lost answer', email }, { 'Idempotency-Key': key });
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.body).toEqual(retry.body);
    } finally {
      await gateway.kill('SIGTERM');
      await gateway.restart({ GATEWAY_GRPC_DEADLINE_MS: String(DEFAULT_CALL_TIMEOUT_MS) });
    }
  }, 90_000);

  it('answers 503 service_unavailable while a service is stopped, and the retry with the same key runs once it is back', async () => {
    const { key, email } = fresh('stopped');
    const subscription = mesh.apps.subscription;
    expect(await subscription.kill('SIGTERM')).toBe(0);
    let down: Awaited<ReturnType<typeof call>>;
    try {
      down = await call('POST', '/v1/customers', { name: 'Stopped', email }, { 'Idempotency-Key': key });
    } finally {
      await subscription.restart();
    }
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable', request_id: down.headers.get('request-id') });
    expect(await customersWithEmail(email)).toEqual([]);

    const retry = await call('POST', '/v1/customers', { name: 'Stopped', email }, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect((await customersWithEmail(email)).map((row) => row.id)).toEqual([retry.body.id]);
    expect((await call('GET', `/v1/customers/${retry.body.id}`)).status).toBe(200);
  }, 90_000);
});
