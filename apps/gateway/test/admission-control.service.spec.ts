import { randomBytes } from 'node:crypto';
import { createTestDatabase, sleep } from '@recur/testing';
import { type GatewayReplica, startGatewayReplica } from './gateway-replica';

/**
 * Admission control on a gateway process: with its slots taken by requests that wait on a service
 * (here one that never answers, until the gRPC deadline), a request waits in the queue and is then
 * refused, one past the queue is refused at once — `503 service_unavailable` with `Retry-After`, in
 * the API's error shape — and once the slots free, requests are served again.
 */
jest.setTimeout(30_000);

const SLOW_MS = 3_000;
const QUEUE_TIMEOUT_MS = 1_000;
const operatorToken = randomBytes(16).toString('hex');
let replica: GatewayReplica;
let key: string;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('gateway_admission');
  replica = await startGatewayReplica(databaseUrl, operatorToken, {
    ADMISSION_MIN_IN_FLIGHT: '2', ADMISSION_MAX_IN_FLIGHT: '2', ADMISSION_MAX_QUEUED: '1', ADMISSION_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS), ADMISSION_OVERLOAD_WAIT_MS: String(QUEUE_TIMEOUT_MS), GATEWAY_GRPC_DEADLINE_MS: String(SLOW_MS),
  });
  const operator = async (path: string, body: unknown): Promise<any> => {
    const response = await fetch(`${replica.adminUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return response.json();
  };
  const account = await operator('/operator/accounts', { name: 'Admission' });
  key = (await operator(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' })).secret;
}, 90_000);

afterAll(() => replica?.process.kill('SIGTERM'));

/** A read the gateway answers itself (200 at once when admitted). */
const quick = () => fetch(`${replica.baseUrl}/v1/webhooks/events`, { headers: { 'x-api-key': key } });
/** A read that waits on the customers' service, which never answers: it holds its slot until the gRPC deadline. */
const slow = () => fetch(`${replica.baseUrl}/v1/customers/cus_waiting`, { headers: { 'x-api-key': key } });

async function timed(request: Promise<Response>): Promise<{ status: number; ms: number; retryAfter: string | null; body: any }> {
  const started = Date.now();
  const response = await request;
  return { status: response.status, ms: Date.now() - started, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

describe('admission control', () => {
  it('queues a request past the slots in flight, refuses it after the queue timeout and one past the queue at once, with 503 service_unavailable and Retry-After; serves again once slots free', async () => {
    expect((await quick()).status).toBe(200);
    const holding = [timed(slow()), timed(slow())];
    // Both slow requests reach their handler (their slots taken) well within this.
    await sleep(500);
    const queued = timed(quick());
    await sleep(50);
    const pastTheQueue = await timed(quick());
    expect(pastTheQueue).toMatchObject({ status: 503, retryAfter: '1', body: { error: { type: 'api_error', code: 'service_unavailable', message: 'The API is at capacity: retry after 1 s.' } } });
    expect(pastTheQueue.body.error.request_id).toMatch(/^req_/);
    expect(pastTheQueue.ms).toBeLessThan(QUEUE_TIMEOUT_MS);
    const timedOut = await queued;
    expect(timedOut).toMatchObject({ status: 503, retryAfter: '1', body: { error: { code: 'service_unavailable' } } });
    expect(timedOut.ms).toBeGreaterThanOrEqual(QUEUE_TIMEOUT_MS - 10);
    // The slow ones were admitted and answered by the gateway's deadline, not refused.
    for (const answer of await Promise.all(holding)) {
      expect(answer.ms).toBeGreaterThanOrEqual(SLOW_MS - 100);
      expect(answer.body.error.message).not.toContain('at capacity');
    }
    expect((await quick()).status).toBe(200);
  });

  it('gives a waiting request the slot a finished one frees', async () => {
    const first = timed(slow());
    await sleep(SLOW_MS - 600);
    const second = timed(slow());
    await sleep(200);
    // Both slots are taken: this one waits in the queue until the first slow request ends (~400 ms, within the queue timeout).
    const waiting = await timed(quick());
    expect(waiting.status).toBe(200);
    expect(waiting.ms).toBeGreaterThan(100);
    await Promise.all([first, second]);
  });
});
