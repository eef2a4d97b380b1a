import { appendFileSync } from 'node:fs';
import { type Attributes, context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult, hrTimeToMicroseconds, suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, type ReadableSpan, type SpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/**
 * Writes finished spans as JSON lines to a file. Used where several processes must be
 * inspected together (the mesh test reads every process's file to follow one trace).
 */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly path: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const lines = spans.map((span) =>
      JSON.stringify({
        trace_id: span.spanContext().traceId,
        span_id: span.spanContext().spanId,
        parent_span_id: span.parentSpanContext?.spanId ?? null,
        name: span.name,
        kind: span.kind,
        service: span.resource.attributes[ATTR_SERVICE_NAME],
        start_us: hrTimeToMicroseconds(span.startTime),
        duration_us: hrTimeToMicroseconds(span.duration),
        attributes: span.attributes,
      }),
    );
    try {
      appendFileSync(this.path, lines.map((line) => `${line}\n`).join(''));
      done({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  async shutdown(): Promise<void> {}
}

let provider: NodeTracerProvider | undefined;

export interface TelemetryOptions {
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /** Extra processors (tests use an in-memory exporter). */
  spanProcessors?: SpanProcessor[];
}

/**
 * Starts tracing for this process. Call it before anything loads `http` or `@grpc/grpc-js`
 * (each app's `instrument.ts` is its first import), so their instrumentation can hook in.
 * Exporters come from the environment: OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set,
 * JSON lines when RECUR_TRACE_FILE is set, none otherwise (context still propagates).
 * With no exporter, spans are not recorded (nothing would read them): trace and span ids still
 * propagate, to logs and to other processes, for a fraction of a recorded span's cost.
 * Calling it again is a no-op: `npm start` hosts every app in one process.
 */
export function startTelemetry(options: TelemetryOptions): void {
  if (provider) return;
  const env = options.env ?? process.env;
  const spanProcessors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  if (env.RECUR_TRACE_FILE) spanProcessors.push(new SimpleSpanProcessor(new JsonLinesSpanExporter(env.RECUR_TRACE_FILE)));

  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? options.serviceName }),
    spanProcessors,
    ...(spanProcessors.length === 0 ? { sampler: new AlwaysOffSampler() } : {}),
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    instrumentations: [
      // Outgoing requests only (webhook deliveries, the payment provider's API). The one incoming
      // request that needs a span, the gateway's, gets it from the gateway's own hook
      // (`startHttpServerSpan`): the instrumentation's context binding costs far more.
      new HttpInstrumentation({ disableIncomingRequestInstrumentation: true }),
      new GrpcInstrumentation({ ignoreGrpcMethods: [/^Check$/, /^Watch$/] }),
    ],
  });
}

export async function shutdownTelemetry(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}

/** The active trace and span ids, for log lines. */
export function currentTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** W3C trace headers (`traceparent`, `tracestate`) of the active context. */
export function injectTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

const tracer = trace.getTracer('@recur/telemetry');

/**
 * Runs `work` in a CLIENT span that continues the trace carried by `carrier`: W3C headers saved
 * when the work was queued (a webhook delivery's), so work run later by a job worker stays in
 * the trace that caused it. `work` gets the headers that carry this span on, to send with its
 * request. HTTP instrumentation is suppressed inside, so this span is the request's only client
 * span and the `traceparent` sent names it. A throw marks the span failed and propagates.
 */
export async function withClientSpan<T>(
  name: string,
  carrier: Record<string, string> | null | undefined,
  attributes: Attributes,
  work: (headers: Record<string, string>, span: Span) => Promise<T>,
): Promise<T> {
  const parent = propagation.extract(ROOT_CONTEXT, carrier ?? {});
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  const active = trace.setSpan(parent, span);
  // Injected before suppressing: the propagator injects nothing in a suppressed context.
  const headers: Record<string, string> = {};
  propagation.inject(active, headers);
  try {
    return await context.with(suppressTracing(active), () => work(headers, span));
  } catch (error) {
    span.recordException(error as Error);
    markSpanFailed(span, (error as Error).message);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks a span failed: an outcome that is not an exception (a webhook answered 500, say). */
export function markSpanFailed(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
