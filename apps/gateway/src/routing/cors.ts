import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { API_KEY_HEADER } from '../auth/api-key-header';
import { requestPath } from '../http/request-context';
import { matchRoute } from './route-table';

/** How long a browser may reuse a successful preflight. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for exactly the routes a publishable key may call (the plan reads, GET and HEAD): the only
 * key meant to sit in a web page. For them, from any origin, a preflight (OPTIONS with
 * Access-Control-Request-Method) is answered 204 with the method and the `x-api-key` header
 * allowed, and every answer, errors included, carries `Access-Control-Allow-Origin: *` (no
 * cookies are involved: the key is the credential). Every other route gets no CORS header, so a
 * browser refuses to call it from a page, and its preflight goes on to the pipeline (401 without a key).
 * The first `/v1` hook (routing/api-route.ts), before authentication: a preflight carries no key.
 */
export function applyCors(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.headers.origin === undefined) return done();
  const requested = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : undefined;
  if (!matchRoute(requested ?? request.method, requestPath(request.raw)).entry?.publishable) return done();
  reply.header('Access-Control-Allow-Origin', '*').header('Access-Control-Expose-Headers', 'Request-Id');
  if (requested === undefined) return done();
  void reply
    .header('Access-Control-Allow-Methods', 'GET, HEAD')
    .header('Access-Control-Allow-Headers', API_KEY_HEADER)
    .header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS))
    .code(204)
    .send();
}
