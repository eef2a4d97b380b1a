import { endHttpServerSpan, type HttpServerSpan, startHttpServerSpan, withinHttpServerSpan } from '@recur/telemetry';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { requestPath, requestState } from './request-context';

const kServerSpan = Symbol('recur.serverSpan');

type TracedRequest = FastifyRequest & { [kServerSpan]: HttpServerSpan | null };

/** Probes (the kubelet's, every few seconds) are not traced: they would bury the requests' traces. */
const UNTRACED_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * The gateway's HTTP SERVER span, from Fastify hooks rather than OpenTelemetry's HTTP
 * instrumentation (its incoming side is off: `startTelemetry`). The span continues the caller's
 * `traceparent`, is the parent of the gRPC client spans the request makes and the span of its
 * log lines, and ends when the response is sent or the client goes away.
 *
 * The instrumentation keeps the context by binding every listener of the request's and the
 * response's event emitters to it, most of its cost. Here the rest of the request runs inside
 * the context from its first hook: Fastify calls each step from the previous one, its body
 * parser resumes in the context the body was awaited in (an AsyncResource: a body arriving after
 * the headers still does), and promises keep it. Register it before any other hook, so they all
 * run inside the span.
 */
export function registerServerSpan(fastify: FastifyInstance): void {
  fastify.decorateRequest(kServerSpan, null);
  fastify.addHook('onRequest', startServerSpan);
  fastify.addHook('onResponse', (request, reply, done) => {
    // 'error' on the response runs these hooks too: a response that did not finish was not sent.
    endServerSpan(request, reply.raw.writableFinished ? reply.raw.statusCode : undefined);
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    endServerSpan(request, undefined);
    done();
  });
}

function startServerSpan(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (UNTRACED_ROUTES.has(request.routeOptions.url ?? '')) return done();
  const serverSpan = startHttpServerSpan(request.raw.method ?? 'GET', requestPath(request.raw), request.raw.headers);
  (request as TracedRequest)[kServerSpan] = serverSpan;
  withinHttpServerSpan(serverSpan, done);
}

/** Whichever comes first, the response sent or the client gone, ends the span. */
function endServerSpan(request: FastifyRequest, statusCode: number | undefined): void {
  const serverSpan = (request as TracedRequest)[kServerSpan];
  if (!serverSpan) return;
  (request as TracedRequest)[kServerSpan] = null;
  // The `/v1` route table's template, else Fastify's own route (pages, callbacks).
  endHttpServerSpan(serverSpan, request.raw.method ?? 'GET', { statusCode, route: requestState(request.raw)?.route?.path ?? request.routeOptions.url });
}
