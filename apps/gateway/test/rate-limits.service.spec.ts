import { randomBytes } from 'node:crypto';
import { createTestDatabase, sleep } from '@recur/testing';
import { type GatewayReplica, startGatewayReplica } from './gateway-replica';

/**
 * Per-key rate limits on two gateway replicas as their own processes on one real database: the
 * limit is shared by the replicas, answers carry the RateLimit headers, over the limit is
 * `429 rate_limited` with `Retry-After`, and a key under its limit is never refused.
 */
// Each test drives seconds of load through two processes: a busy 2-core machine needs more than Jest's 5 s.
jest.setTimeout(30_000);

let replicas: GatewayReplica[] = [];
let databaseUrl: string;
const operatorToken = randomBytes(16).toString('hex');

beforeAll(async () => {
  databaseUrl = await createTestDatabase('gateway_rate_limits');
  replicas = [await startGatewayReplica(databaseUrl, operatorToken), await startGatewayReplica(databaseUrl, operatorToken)];
}, 90_000);

afterAll(() => {
  for (const replica of replicas) replica.process.kill('SIGTERM');
});

async function operator(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${replicas[0].adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function newAccount(app: 'sandbox' | 'live' = 'sandbox'): Promise<{ accountId: string; secret: string }> {
  const account = (await operator('POST', '/operator/accounts', { name: 'Rate limits' })).body;
  const key = (await operator('POST', `/operator/accounts/${account.id}/keys`, { app, type: app === 'live' ? 'live' : 'test' })).body;
  return { accountId: account.id, secret: key.secret };
}

const read = (baseUrl: string, key: string) => fetch(`${baseUrl}/v1/webhooks/events`, { headers: { 'x-api-key': key } });
// A write the gateway refuses itself (400: no body fields), counted like any write.
const write = (baseUrl: string, key: string) => fetch(`${baseUrl}/v1/customers`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{}' });

/** Waits for the start of the next one-second window, so a burst stays within one window. */
async function windowStart(): Promise<void> {
  await sleep(1_000 - (Date.now() % 1_000) + 5);
}

describe('rate limits', () => {
  it('defaults to 25 reads and 25 writes a second per sandbox key and 100 per live key; an app’s own limit overrides them and null returns to the default', async () => {
    const { accountId } = await newAccount();
    const listed = (await operator('GET', `/operator/accounts/${accountId}/rate-limits`)).body;
    expect(listed.data.map((view: any) => [view.app, view.read_per_second, view.write_per_second, view.default_per_second])).toEqual([
      ['sandbox', 25, 25, 25],
      ['live', 100, 100, 100],
    ]);
    const set = await operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app: 'live', read_per_second: 500 });
    expect(set).toEqual({ status: 200, body: { object: 'rate_limits', account: accountId, app: 'live', read_per_second: 500, write_per_second: 100, own: { read_per_second: 500, write_per_second: null }, default_per_second: 100 } });
    expect((await operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app: 'live', read_per_second: null })).body).toMatchObject({ read_per_second: 100, own: { read_per_second: null } });
    for (const wrong of [{ app: 'live', read_per_second: 0 }, { app: 'live', write_per_second: 1.5 }, { app: 'staging', read_per_second: 10 }]) {
      expect((await operator('POST', `/operator/accounts/${accountId}/rate-limits`, wrong)).status).toBe(400);
    }
    expect((await operator('POST', '/operator/accounts/acct_missing/rate-limits', { app: 'live', read_per_second: 10 })).status).toBe(404);
  });

  it('answers every request with RateLimit headers and, over the limit, 429 rate_limited with Retry-After; reads and writes are counted apart', async () => {
    const { secret } = await newAccount();
    const [replica] = replicas;
    // The key read once first (in another window), so the burst below is not slowed by its row.
    expect((await read(replica.baseUrl, secret)).status).toBe(200);
    let answers: Response[] = [];
    // A burst that ran into the next window measured two windows: run it again.
    for (let attempt = 0, spilled = true; spilled && attempt < 3; attempt++) {
      await windowStart();
      const second = Math.floor(Date.now() / 1_000);
      answers = await Promise.all(Array.from({ length: 30 }, () => read(replica.baseUrl, secret)));
      spilled = Math.floor(Date.now() / 1_000) !== second;
    }
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(25);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    const admitted = answers.filter((answer) => answer.status === 200);
    for (const answer of admitted) {
      expect(answer.headers.get('ratelimit-limit')).toBe('25');
      expect(answer.headers.get('ratelimit-reset')).toBe('1');
      expect(answer.headers.get('retry-after')).toBeNull();
    }
    expect(admitted.map((answer) => Number(answer.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, index) => index));
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-limit')).toBe('25');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('1');
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests: this key may make 25 read requests a second. Retry after 1 s.' });
    expect(body.error.request_id).toBe(refused.headers.get('request-id'));
    // Writes have their own count: the reads used this window up, the writes still pass.
    const writeAnswer = await write(replica.baseUrl, secret);
    expect(writeAnswer.status).toBe(400);
    expect(writeAnswer.headers.get('ratelimit-remaining')).toBe('24');
    // The next window starts again.
    await windowStart();
    expect((await read(replica.baseUrl, secret)).status).toBe(200);
  });

  it('shares the limit between replicas: a burst through both admits the limit once, not once per replica', async () => {
    const { accountId, secret } = await newAccount();
    await operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app: 'sandbox', read_per_second: 40 });
    const counts: { admitted: number; refused: number }[] = [];
    while (counts.length < 3) {
      await windowStart();
      const second = Math.floor(Date.now() / 1_000);
      // 60 reads on each replica, 120 in all, sent in waves of 10 per replica so the replicas' counts meet in PostgreSQL.
      const statuses: number[] = [];
      for (let wave = 0; wave < 6; wave++) {
        const answers = await Promise.all(replicas.flatMap((replica) => Array.from({ length: 10 }, () => read(replica.baseUrl, secret))));
        statuses.push(...answers.map((answer) => answer.status));
      }
      // A round that ran into the next window measured two windows: run it again.
      if (Math.floor(Date.now() / 1_000) !== second) continue;
      counts.push({ admitted: statuses.filter((status) => status === 200).length, refused: statuses.filter((status) => status === 429).length });
    }
    for (const { admitted, refused } of counts) {
      expect(admitted + refused).toBe(120);
      // Not shared, each replica would admit 40 (80 in all). Shared: 40, plus at most the other
      // replica's admissions it may hold unshared, a tenth of the limit (the stated tolerance).
      expect(admitted).toBeGreaterThanOrEqual(40);
      expect(admitted).toBeLessThanOrEqual(44);
    }
  });

  it('never refuses a key under its limit, spread over both replicas for three seconds', async () => {
    const { accountId, secret } = await newAccount('live');
    await operator('POST', `/operator/accounts/${accountId}/rate-limits`, { app: 'live', read_per_second: 60, write_per_second: 60 });
    // 50 reads and 50 writes in each one-second window (of 60 each), in five waves through both replicas.
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      await windowStart();
      for (let wave = 0; wave < 5; wave++) {
        const answers = await Promise.all(replicas.flatMap((replica) => Array.from({ length: 5 }, () => [read(replica.baseUrl, secret), write(replica.baseUrl, secret)]).flat()));
        statuses.push(...answers.map((answer) => answer.status));
        await sleep(100);
      }
    }
    expect(statuses).toHaveLength(300);
    expect(statuses.filter((status) => status === 429)).toEqual([]);
  });

});
