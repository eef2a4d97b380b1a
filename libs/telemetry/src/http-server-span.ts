import type { IncomingHttpHeaders } from 'node:http';
import { type Context, context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';

const tracer = trace.getTracer('@recur/telemetry');

/** An incoming HTTP request's SERVER span and the trace context that carries it. */
export interface HttpServerSpan {
  span: Span;
  /** The caller's W3C trace context with this span active: what the request's work runs in. */
  context: Context;
}

/**
 * Starts the SERVER span of an incoming HTTP request, continuing the trace of its `traceparent`
 * (a root span without one). It is named by the method until `endHttpServerSpan` knows the route.
 * OpenTelemetry's HTTP instrumentation does not trace incoming requests (`startTelemetry`): the
 * one HTTP server that needs a span, the gateway, starts its own, cheaper (see its `server-span.ts`).
 */
export function startHttpServerSpan(method: string, path: string, headers: IncomingHttpHeaders): HttpServerSpan {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `work` in the request's trace context: its gRPC client spans and log lines are the server span's. */
export function withinHttpServerSpan<T>(serverSpan: HttpServerSpan, work: () => T): T {
  return context.with(serverSpan.context, work);
}

export interface HttpServerOutcome {
  /** The status sent; absent when the client went away before the response was sent. */
  statusCode?: number;
  /** The route template (`/v1/customers/:id`), when the request was routed: never the path, whose ids would make every name unique. */
  route?: string;
}

/**
 * Ends the span: named `POST /v1/customers/:id` once routed, failed on a 5xx or when the client
 * closed the connection first (a 4xx is the caller's error and leaves it unset, as OpenTelemetry's
 * HTTP conventions say).
 */
export function endHttpServerSpan({ span }: HttpServerSpan, method: string, outcome: HttpServerOutcome): void {
  if (span.isRecording()) {
    const { statusCode, route } = outcome;
    if (route) {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.updateName(`${method} ${route}`);
    }
    if (statusCode === undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection before the response' });
    } else {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
      if (statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
  }
  span.end();
}
