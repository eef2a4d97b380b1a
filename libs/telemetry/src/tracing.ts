import { appendFileSync } from 'node:fs';
import { context, propagation, trace } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult, hrTimeToMicroseconds, W3CTraceContextPropagator } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
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
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (request) => /^\/(metrics|healthz|readyz)/.test(request.url ?? '') }),
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
