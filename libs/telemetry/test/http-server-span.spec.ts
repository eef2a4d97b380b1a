import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { currentTraceIds, endHttpServerSpan, startHttpServerSpan, withinHttpServerSpan } from '../src';

describe('the HTTP server span', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
    trace.disable();
  });
  beforeEach(() => exporter.reset());

  it("continues the caller's traceparent and is the active span of the work run within it, across awaits", async () => {
    const traceId = 'a'.repeat(32);
    const serverSpan = startHttpServerSpan('POST', '/v1/customers', { traceparent: `00-${traceId}-${'b'.repeat(16)}-01` });
    const ids = await withinHttpServerSpan(serverSpan, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return currentTraceIds();
    });
    endHttpServerSpan(serverSpan, 'POST', { statusCode: 201, route: '/v1/customers' });
    const [span] = exporter.getFinishedSpans();
    expect(ids).toEqual({ trace_id: traceId, span_id: span.spanContext().spanId });
    expect(span.parentSpanContext?.spanId).toBe('b'.repeat(16));
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.name).toBe('POST /v1/customers');
    expect(span.attributes).toEqual({ 'http.request.method': 'POST', 'url.path': '/v1/customers', 'http.route': '/v1/customers', 'http.response.status_code': 201 });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('is a root span without a traceparent, named by the method alone when unrouted, a 4xx not failed', () => {
    const serverSpan = startHttpServerSpan('GET', '/nowhere', {});
    endHttpServerSpan(serverSpan, 'GET', { statusCode: 404 });
    const [span] = exporter.getFinishedSpans();
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.name).toBe('GET');
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('is failed on a 5xx and when the client went away first', () => {
    endHttpServerSpan(startHttpServerSpan('GET', '/v1/plans', {}), 'GET', { statusCode: 503, route: '/v1/plans' });
    endHttpServerSpan(startHttpServerSpan('POST', '/v1/plans', {}), 'POST', { route: '/v1/plans' });
    const [unavailable, aborted] = exporter.getFinishedSpans();
    expect(unavailable.status.code).toBe(SpanStatusCode.ERROR);
    expect(unavailable.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(aborted.status.code).toBe(SpanStatusCode.ERROR);
    expect(aborted.attributes['error.type']).toBe('aborted');
    expect(aborted.attributes['http.response.status_code']).toBeUndefined();
  });
});
