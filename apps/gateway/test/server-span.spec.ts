import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subscriptionV1 } from '@recur/contracts';
import { type AppProcess, createTestDatabase, eventually, freePort, type ServiceUnderTest, sleep, startApp, startServiceUnderTest } from '@recur/testing';

/**
 * The gateway's HTTP server span (`http/server-span.ts`), read from the spans the gateway and a
 * real subscription service write (RECUR_TRACE_FILE): it continues the caller's `traceparent`,
 * is the parent of the gRPC call the request makes (its body read first: the context must
 * survive the body's arrival), is named by its route, ends when the client goes away, and
 * leaves health probes untraced.
 */
const SpanKind = { SERVER: 1, CLIENT: 2 } as const;
type Span = { trace_id: string; span_id: string; parent_span_id: string | null; name: string; service: string; kind: number; attributes: Record<string, unknown> };

let traceDir: string;
let subscription: ServiceUnderTest<typeof subscriptionV1.SubscriptionService>;
let gateway: AppProcess;
let baseUrl: string;
let httpPort: number;
let apiKey: string;
const operatorToken = randomBytes(16).toString('hex');

beforeAll(async () => {
  traceDir = mkdtempSync(join(tmpdir(), 'recur-server-span-'));
  const nowhere = '127.0.0.1:9';
  subscription = await startServiceUnderTest('subscription', subscriptionV1.SubscriptionService, {
    CATALOG_GRPC_ADDR: nowhere, INVOICING_GRPC_ADDR: nowhere, USAGE_METERING_GRPC_ADDR: nowhere, PAYMENTS_GRPC_ADDR: nowhere, RECUR_TRACE_FILE: join(traceDir, 'subscription.jsonl'),
  });
  const databaseUrl = await createTestDatabase('gateway_span');
  httpPort = await freePort();
  const adminPort = await freePort();
  gateway = await startApp('gateway', {
    env: {
      DATABASE_URL: databaseUrl, HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), RECUR_OPERATOR_TOKEN: operatorToken, ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort), RECUR_TRACE_FILE: join(traceDir, 'gateway.jsonl'),
      SUBSCRIPTION_GRPC_ADDR: subscription.grpcAddress, CATALOG_GRPC_ADDR: nowhere, INVOICING_GRPC_ADDR: nowhere, PAYMENTS_GRPC_ADDR: nowhere, USAGE_METERING_GRPC_ADDR: nowhere, WEBHOOK_DISPATCH_GRPC_ADDR: nowhere,
    },
    ready: { httpUrl: `http://127.0.0.1:${httpPort}/readyz` },
  });
  baseUrl = `http://127.0.0.1:${httpPort}`;
  const operator = async <T>(path: string, body: unknown): Promise<T> =>
    (await fetch(`http://127.0.0.1:${adminPort}${path}`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<T>;
  const account = await operator<{ id: string }>('/operator/accounts', { name: 'Traced' });
  apiKey = (await operator<{ secret: string }>(`/operator/accounts/${account.id}/keys`, { app: 'sandbox', type: 'test' })).secret;
}, 120_000);

afterAll(async () => {
  await Promise.all([gateway?.kill('SIGTERM'), subscription?.stop()]);
  rmSync(traceDir, { recursive: true, force: true });
}, 60_000);

/** Every finished span so far; a line still being appended (no newline yet) is left for the next read. */
const readSpans = (service: 'gateway' | 'subscription'): Span[] => {
  const file = join(traceDir, `${service}.jsonl`);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as Span) : [];
};
const serverSpanOf = (traceId: string) =>
  eventually(async () => readSpans('gateway').find((span) => span.trace_id === traceId && span.kind === SpanKind.SERVER), 10_000, `the gateway's server span of trace ${traceId}`);

describe("the gateway's HTTP server span", () => {
  it("continues the caller's traceparent and is the parent of the gRPC call made once the body was read", async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    // The body follows the headers a moment later, as a slow client's or a large body's does:
    // it then arrives outside the request's context, which the span's hooks must restore.
    const request = httpRequest(`${baseUrl}/v1/customers`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const answered = new Promise<{ status?: number }>((resolve, reject) => request.on('response', (answer) => answer.resume().on('end', () => resolve({ status: answer.statusCode }))).on('error', reject));
    request.flushHeaders();
    await sleep(100);
    request.end(JSON.stringify({ name: 'Traced', email: 'traced@example.com' }));
    const response = await answered;
    expect(response.status).toBe(201);
    const server = await serverSpanOf(traceId);
    expect(server).toMatchObject({ name: 'POST /v1/customers', parent_span_id: callerSpanId });
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.path': '/v1/customers', 'http.route': '/v1/customers', 'http.response.status_code': 201 });
    expect(server.attributes['error.type']).toBeUndefined();
    const grpcClient = readSpans('gateway').find((span) => span.trace_id === traceId && span.kind === SpanKind.CLIENT);
    expect(grpcClient).toMatchObject({ name: 'grpc.recur.subscription.v1.SubscriptionService/CreateCustomer', parent_span_id: server.span_id });
    const grpcServer = await eventually(async () => readSpans('subscription').find((span) => span.trace_id === traceId && span.kind === SpanKind.SERVER), 10_000, 'the subscription service span');
    expect(grpcServer.parent_span_id).toBe(grpcClient!.span_id);
  });

  it('starts a trace of its own without a traceparent, named by the route template, a 4xx not an error', async () => {
    const before = new Set(readSpans('gateway').map((span) => span.span_id));
    const response = await fetch(`${baseUrl}/v1/customers/cus_missing`, { headers: { 'x-api-key': apiKey } });
    expect(response.status).toBe(404);
    const server = await eventually(async () => readSpans('gateway').find((span) => !before.has(span.span_id) && span.kind === SpanKind.SERVER), 10_000, 'the new server span');
    expect(server).toMatchObject({ name: 'GET /v1/customers/:id', parent_span_id: null });
    expect(server.attributes).toMatchObject({ 'url.path': '/v1/customers/cus_missing', 'http.route': '/v1/customers/:id', 'http.response.status_code': 404 });
    expect(server.attributes['error.type']).toBeUndefined();
    const grpcClient = readSpans('gateway').find((span) => span.trace_id === server.trace_id && span.kind === SpanKind.CLIENT);
    expect(grpcClient).toMatchObject({ name: 'grpc.recur.subscription.v1.SubscriptionService/GetCustomer', parent_span_id: server.span_id });
  });

  it('traces no health probe', async () => {
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/readyz/`)).status).toBe(200);
    // A request after the probes: once its span is written, theirs would have been.
    const traceId = randomBytes(16).toString('hex');
    await fetch(`${baseUrl}/v1/customers/cus_after_probes`, { headers: { 'x-api-key': apiKey, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    await serverSpanOf(traceId);
    expect(readSpans('gateway').filter((span) => /healthz|readyz/.test(String(span.attributes['url.path'])))).toEqual([]);
  });

  it('ends, failed, when the client goes away before the answer', async () => {
    const traceId = randomBytes(16).toString('hex');
    // Half a body, then the connection closes: the request never reaches its handler.
    const request = httpRequest(`${baseUrl}/v1/customers`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'content-length': '100', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    request.on('error', () => undefined);
    request.write('{"name":');
    await sleep(200);
    request.destroy();
    const server = await serverSpanOf(traceId);
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'error.type': 'aborted' });
    expect(server.attributes['http.response.status_code']).toBeUndefined();
    expect(readSpans('gateway').filter((span) => span.trace_id === traceId && span.kind === SpanKind.CLIENT)).toEqual([]);
  });
});
