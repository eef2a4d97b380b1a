import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectionError, IdempotencyError, InvalidRequestError, RateLimitError, Recur } from '../src';

/**
 * The hand-written layer against a real HTTP server on a free port, which answers what a test
 * scripts: retries with the same Idempotency-Key, Retry-After, typed errors, paging. (Against the
 * real gateway: tests/mesh/test/sdk.mesh.spec.ts.)
 */
interface Seen {
  method: string;
  url: string;
  key?: string;
  apiKey?: string;
  at: number;
  body: string;
}
type Handler = (request: Seen, response: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let handlers: Handler[] = [];
let seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const entry = { method: request.method!, url: request.url!, key: request.headers['idempotency-key'] as string | undefined, apiKey: request.headers['x-api-key'] as string | undefined, at: Date.now(), body };
      seen.push(entry);
      const handler = handlers.shift() ?? ((_request, res) => json(res, 500, { error: { type: 'api_error', code: 'unscripted', message: 'no answer scripted', request_id: 'req_x' } }));
      handler(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  handlers = [];
  seen = [];
});

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_test', ...headers }).end(JSON.stringify(body));
}
const error = (type: string, code: string, message = code) => ({ error: { type, code, message, request_id: 'req_test' } });
const customer = (id: string) => ({ id, object: 'customer', name: 'Ada', email: 'ada@example.com' });
const recur = (options = {}) => new Recur('recur_test_sk_unit', { baseUrl, initialDelayMs: 10, maxDelayMs: 3_000, ...options });

describe('@recur/node', () => {
  it('sends the key, and an Idempotency-Key on a POST that it reuses on each retry after 503 and 500', async () => {
    handlers = [
      (_r, res) => json(res, 503, error('api_error', 'service_unavailable')),
      (_r, res) => json(res, 500, error('api_error', 'internal')),
      (_r, res) => json(res, 201, customer('cus_1')),
    ];
    const created = await recur().customers.create({ name: 'Ada', email: 'ada@example.com' });
    expect(created.id).toBe('cus_1');
    expect(seen).toHaveLength(3);
    expect(seen[0].key).toMatch(/^node-[0-9a-f-]{36}$/);
    expect(new Set(seen.map((request) => request.key)).size).toBe(1);
    expect(seen.map((request) => request.apiKey)).toEqual(Array(3).fill('recur_test_sk_unit'));
    expect(new Set(seen.map((request) => request.body))).toEqual(new Set([JSON.stringify({ name: 'Ada', email: 'ada@example.com' })]));
  });

  it('keeps a key the caller gives', async () => {
    handlers = [(_r, res) => json(res, 201, customer('cus_2'))];
    await recur().customers.create({ name: 'Ada', email: 'ada@example.com' }, { idempotencyKey: 'order-42' });
    expect(seen[0].key).toBe('order-42');
  });

  it('waits Retry-After on a 429 rather than its own shorter backoff', async () => {
    handlers = [(_r, res) => json(res, 429, error('rate_limit_error', 'rate_limited'), { 'retry-after': '1' }), (_r, res) => json(res, 200, customer('cus_3'))];
    await recur().customers.retrieve('cus_3');
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it('retries 409 idempotency_key_in_progress, but not another 409, which it throws typed', async () => {
    handlers = [(_r, res) => json(res, 409, error('idempotency_error', 'idempotency_key_in_progress')), (_r, res) => json(res, 201, customer('cus_4'))];
    expect((await recur().customers.create({ name: 'Ada', email: 'ada@example.com' })).id).toBe('cus_4');
    expect(seen[0].key).toBe(seen[1].key);

    handlers = [(_r, res) => json(res, 409, error('idempotency_error', 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request'))];
    seen = [];
    const refused = await recur().customers.create({ name: 'Ada', email: 'ada@example.com' }, { idempotencyKey: 'k' }).catch((thrown: unknown) => thrown);
    expect(refused).toBeInstanceOf(IdempotencyError);
    expect(refused).toMatchObject({ status: 409, type: 'idempotency_error', code: 'idempotency_key_reused', requestId: 'req_test', message: 'This Idempotency-Key was already used with a different request' });
    expect(seen).toHaveLength(1);
  });

  it('throws the documented error shape as a typed error, without retrying a 400', async () => {
    handlers = [(_r, res) => json(res, 400, { error: { type: 'invalid_request_error', code: 'parameter_missing', message: 'email is required', param: 'email', request_id: 'req_400' } })];
    const refused = await recur().customers.create({ name: 'Ada' } as never).catch((thrown: unknown) => thrown);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'parameter_missing', param: 'email', requestId: 'req_400' });
    expect(seen).toHaveLength(1);
  });

  it('gives up after maxRetries and throws the last answer typed', async () => {
    handlers = Array(3).fill((_r: Seen, res: ServerResponse) => json(res, 429, error('rate_limit_error', 'rate_limited'), { 'retry-after': '0' }));
    await expect(recur({ maxRetries: 2 }).customers.retrieve('cus_x')).rejects.toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(3);
  });

  it('retries a refused connection, then throws ConnectionError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const thrown = await new Recur('recur_test_sk_unit', { baseUrl: `http://127.0.0.1:${port}`, initialDelayMs: 5, maxRetries: 2 }).customers.retrieve('cus_x').catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ConnectionError);
    expect((thrown as Error).message).toContain('after 3 attempt(s)');
  });

  it('awaited, a list is its first page; iterated with for await, every item of every page once, the later pages by cursor', async () => {
    const items = Array.from({ length: 25 }, (_, index) => customer(`cus_${String(index).padStart(2, '0')}`));
    const serve: Handler = (request, res) => {
      const query = new URL(request.url, baseUrl).searchParams;
      const limit = Number(query.get('limit') ?? 10);
      const after = query.get('starting_after');
      const before = query.get('ending_before');
      const at = (id: string) => items.findIndex((item) => item.id === id);
      const [from, to] = before !== null ? [Math.max(0, at(before) - limit), at(before)] : [after === null ? 0 : at(after) + 1, (after === null ? 0 : at(after) + 1) + limit];
      const hasMore = before !== null ? from > 0 : to < items.length;
      json(res, 200, { object: 'list', url: '/v1/customers', data: items.slice(from, to), total: items.length, limit, offset: 0, has_more: hasMore });
    };
    handlers = Array(10).fill(serve);
    const client = recur();
    const first = await client.customers.list({ limit: 10 });
    expect(first.data.map((item) => item.id)).toEqual(items.slice(0, 10).map((item) => item.id));
    const ids: string[] = [];
    for await (const item of client.customers.list({ limit: 10, email: 'a@example.com' })) ids.push(item.id);
    expect(ids).toEqual(items.map((item) => item.id));
    const forwards = seen.slice(1).map((request) => new URL(request.url, baseUrl).searchParams);
    expect(forwards.map((query) => [query.get('starting_after'), query.get('offset'), query.get('email')])).toEqual([
      [null, null, 'a@example.com'], ['cus_09', null, 'a@example.com'], ['cus_19', null, 'a@example.com'],
    ]);

    // From a cursor backwards: towards the newest, each page's items yielded oldest first.
    const backwards: string[] = [];
    for await (const item of client.customers.list({ limit: 10, ending_before: 'cus_15' })) backwards.push(item.id);
    expect(backwards).toEqual(items.slice(0, 15).map((item) => item.id).reverse());
    expect(seen.slice(4).map((request) => new URL(request.url, baseUrl).searchParams.get('ending_before'))).toEqual(['cus_15', 'cus_05']);
  });
});
