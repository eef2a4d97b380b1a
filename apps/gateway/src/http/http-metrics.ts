import { httpDuration } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { requestState } from './request-context';

/**
 * Times every request, labelled by its route template (not its path: ids would explode cardinality).
 * Fastify's `onResponse` hook, once the answer is sent: the time from `onRequest` (Fastify's own clock).
 */
export function recordHttpDuration(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  httpDuration.observe({ method: request.method, route: requestState(request.raw)?.route?.path ?? 'other', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  done();
}
