import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../http/api-error';
import { callerOf, requestPath, requestState } from '../http/request-context';
import { matchRoute } from './route-table';

/**
 * Matches the request against the route table (404 route_not_found, 405 method_not_allowed
 * with the path's `Allow` header)
 * and applies the key rules of the specification to every route in it:
 * a publishable key may call only the four plan reads (else 403 publishable_key_forbidden);
 * a read_only key may call only reads (else 403 api_key_read_only). A `/v1` hook: routing/api-route.ts.
 */
export function applyRoutePolicy(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const state = requestState(request.raw);
  const caller = callerOf(request.raw);
  const method = request.method;
  const path = requestPath(request.raw);
  const match = matchRoute(method, path);
  if (!match.entry) {
    if (match.pathExists) reply.header('Allow', match.allowed.join(', '));
    return done(
      match.pathExists
        ? new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${path}.`)
        : new ApiError(404, 'route_not_found', `Unrecognized request URL (${method} ${path}).`),
    );
  }
  state.route = match.entry;
  state.params = match.params;
  if (caller.kind === 'publishable' && !match.entry.publishable) {
    return done(new ApiError(403, 'publishable_key_forbidden', 'A publishable key may only read plans (GET /v1/plans, /v1/plans/:id, /v1/plans/:id/tiers, /v1/plans/:id/price-components).'));
  }
  if (caller.scope === 'read_only' && !match.entry.read) {
    return done(new ApiError(403, 'api_key_read_only', 'This key is read-only and cannot make changes.'));
  }
  done();
}
