import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '@recur/testing';
import { api, eventually, type Keys, type Mesh, startMesh, MESH_START_TIMEOUT_MS } from './mesh';

/**
 * One request followed by its trace, from the webhook a real receiver got back to the HTTP
 * request that caused it: every process writes its finished spans to a JSON-lines file, and the
 * test walks the parent links. Private URLs are allowed here so the receiver on 127.0.0.1 can be
 * an endpoint (the customers mesh keeps them refused, and tests that).
 */
let mesh: Mesh;
let keys: Keys;
let receiver: WebhookReceiver;
/** OpenTelemetry's SpanKind values, as the trace files record them. */
const SpanKind = { SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
type Span = { trace_id: string; span_id: string; parent_span_id: string | null; name: string; service: string; kind: number; attributes: Record<string, unknown> };

beforeAll(async () => {
  [mesh, receiver] = await Promise.all([startMesh({ env: { 'webhook-dispatch': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } } }), startWebhookReceiver()]);
  ({ keys } = await mesh.createAccount('Traced'));
}, MESH_START_TIMEOUT_MS);

afterAll(async () => {
  mesh?.webhookDispatch.close();
  await Promise.all([mesh?.stop(), receiver?.stop()]);
}, 60_000);

/** Every finished span of every process; a line still being appended (no newline yet) is left for the next read. */
const readSpans = (): Span[] =>
  readdirSync(mesh.traceDir).flatMap((file) => readFileSync(join(mesh.traceDir, file), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line) as Span));

describe('one trace from the gateway to the webhook receiver', () => {
  it('follows its own request by parent links: webhook delivery → Kafka consumer → relay publish → gRPC server → gRPC client → gateway HTTP', async () => {
    const call = api(mesh, keys.test);
    const path = '/hooks/traced';
    expect((await call('POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events: ['customer.created'] })).status).toBe(201);
    const created = await call('POST', '/v1/customers', { name: 'Traced', email: 'traced@example.com' });
    expect(created.status).toBe(201);

    // The delivery of this customer's own event, as the receiver got it.
    const arrival = await eventually(async () => (await receiver.received(path)).find((entry) => JSON.parse(entry.body).data.object.id === created.body.id), 30_000, 'the delivery of our customer.created');
    const event = JSON.parse(arrival.body) as { id: string; type: string };
    expect(event.type).toBe('customer.created');
    const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(arrival.headers.traceparent ?? '');
    expect({ traceparent: arrival.headers.traceparent, valid: traceparent !== null }).toEqual({ traceparent: arrival.headers.traceparent, valid: true });
    const [, traceId, deliverySpanId] = traceparent!;

    // The traceparent names the dispatcher's span of this attempt.
    const delivery = await eventually(async () => readSpans().find((span) => span.span_id === deliverySpanId), 30_000, 'the span the traceparent names');
    // Each process exports its spans in batches of its own: a parent may reach its file after the delivery's span.
    let spans: Span[] = [];
    let missingParentOf: string | undefined;
    const parentsOf = (): Span[] | undefined => {
      spans = readSpans();
      const byId = new Map(spans.map((span) => [span.span_id, span]));
      const chain: Span[] = [delivery];
      for (let span = delivery; span.parent_span_id; ) {
        const parent = byId.get(span.parent_span_id);
        missingParentOf = parent ? undefined : span.name;
        if (!parent) return undefined;
        chain.push((span = parent));
      }
      return chain;
    };
    const chain = await eventually(async () => parentsOf(), 15_000, 'every parent of the delivery span').catch(() => []);
    expect({ missingParentOf }).toEqual({ missingParentOf: undefined });
    expect(chain.map((span) => [span.service, span.kind])).toEqual([
      ['webhook-dispatch', SpanKind.CLIENT],
      ['webhook-dispatch', SpanKind.CONSUMER],
      ['subscription', SpanKind.PRODUCER],
      ['subscription', SpanKind.SERVER],
      ['gateway', SpanKind.CLIENT],
      ['gateway', SpanKind.SERVER],
    ]);
    const [, consumer, producer, grpcServer, grpcClient, http] = chain;
    expect(delivery.name).toBe('webhook deliver');
    expect(delivery.attributes).toMatchObject({ 'recur.event.id': event.id, 'recur.event.type': 'customer.created', 'recur.delivery.attempt': 1, 'http.response.status_code': 200 });
    expect(consumer.attributes['messaging.message.id']).toBe(event.id);
    expect(producer.attributes['messaging.message.id']).toBe(event.id);
    expect(grpcServer.name).toBe('grpc.recur.subscription.v1.SubscriptionService/CreateCustomer');
    expect(grpcClient.name).toBe(grpcServer.name);
    expect(http.name).toMatch(/^POST/);
    expect(http.parent_span_id).toBeNull();
    expect(new Set(chain.map((span) => span.trace_id))).toEqual(new Set([traceId]));
    // The attempt is the request's only client span: HTTP instrumentation adds no span of its own under it.
    expect(spans.filter((span) => span.parent_span_id === delivery.span_id)).toEqual([]);
  });
});
