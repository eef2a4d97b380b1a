import { randomBytes } from 'node:crypto';
import { type AppProcess, createTestDatabase, freePort, queryDatabase, sleep, startApp } from '@recur/testing';
import { KEY_CACHE_TTL_MS } from '../src/auth/api-key';

/**
 * The gateway as its own process on a real database: resolved keys are served from memory, and a
 * key revoked where this gateway cannot hear it (another replica, straight in the table) is
 * refused within KEY_CACHE_TTL_MS; revoked or rolled through this gateway, at once.
 */
let gateway: AppProcess;
let baseUrl: string;
/** The admin listener, where /operator/… is served. */
let adminUrl: string;
let databaseUrl: string;
const operatorToken = randomBytes(16).toString('hex');

beforeAll(async () => {
  databaseUrl = await createTestDatabase('gateway_keys');
  const httpPort = await freePort();
  const adminPort = await freePort();
  // No service is called here: the route below is answered by the gateway itself.
  const nowhere = '127.0.0.1:9';
  gateway = await startApp('gateway', {
    env: {
      DATABASE_URL: databaseUrl, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), RECUR_OPERATOR_TOKEN: operatorToken, ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort),
      CATALOG_GRPC_ADDR: nowhere, SUBSCRIPTION_GRPC_ADDR: nowhere, INVOICING_GRPC_ADDR: nowhere, PAYMENTS_GRPC_ADDR: nowhere, USAGE_METERING_GRPC_ADDR: nowhere, WEBHOOK_DISPATCH_GRPC_ADDR: nowhere,
    },
    ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
  });
  baseUrl = `http://127.0.0.1:${httpPort}`;
  adminUrl = `http://127.0.0.1:${adminPort}`;
}, 60_000);

afterAll(() => gateway?.kill('SIGTERM'));

async function operator(path: string, body: unknown = {}): Promise<any> {
  const response = await fetch(`${adminUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return response.json();
}

const statusWith = async (key: string) => (await fetch(`${baseUrl}/v1/webhooks/events`, { headers: { 'x-api-key': key } })).status;

async function newKey(): Promise<{ id: string; secret: string }> {
  const account = await operator('/operator/accounts', { name: 'Key cache' });
  return operator(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' });
}

describe('API key cache', () => {
  it(`refuses a key revoked by another replica within ${KEY_CACHE_TTL_MS} ms, having served it from memory until then`, async () => {
    const key = await newKey();
    expect(await statusWith(key.secret)).toBe(200);
    await queryDatabase(databaseUrl, 'UPDATE api_keys SET expires_at = now() WHERE id = $1', [key.id]);
    const revokedAt = Date.now();
    const answers: number[] = [];
    let refusedAfter: number | undefined;
    while (refusedAfter === undefined && Date.now() - revokedAt < KEY_CACHE_TTL_MS + 5_000) {
      const status = await statusWith(key.secret);
      answers.push(status);
      if (status === 401) refusedAfter = Date.now() - revokedAt;
      else await sleep(100);
    }
    // Served from memory at first (the cache is in use)…
    expect(answers[0]).toBe(200);
    // …and refused within the bound (plus the poll's own step and a loaded machine's slack).
    expect(refusedAfter).toBeDefined();
    expect(refusedAfter!).toBeLessThanOrEqual(KEY_CACHE_TTL_MS + 1_000);
  }, 30_000);

  it('refuses a key revoked or rolled through this gateway at once, and serves the replacement', async () => {
    const revoked = await newKey();
    const rolled = await newKey();
    expect(await statusWith(revoked.secret)).toBe(200);
    expect(await statusWith(rolled.secret)).toBe(200);
    await operator(`/operator/keys/${revoked.id}/revoke`);
    const replacement = await operator(`/operator/keys/${rolled.id}/roll`);
    expect(await statusWith(revoked.secret)).toBe(401);
    expect(await statusWith(rolled.secret)).toBe(401);
    expect(await statusWith(replacement.secret)).toBe(200);
  });

  it('honours a rolled key’s grace period from memory', async () => {
    const key = await newKey();
    expect(await statusWith(key.secret)).toBe(200);
    await operator(`/operator/keys/${key.id}/roll`, { expires_in_seconds: 2 });
    expect(await statusWith(key.secret)).toBe(200);
    await sleep(2_100);
    expect(await statusWith(key.secret)).toBe(401);
  });
});
