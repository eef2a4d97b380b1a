import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../http/api-error';
import { sendApiError } from '../http/api-exception.filter';
import { callerOf, requestState } from '../http/request-context';
import { matchRoute } from './route-table';

/**
 * Matches the request against the route table (404 route_not_found, 405 method_not_allowed
 * with the path's `Allow` header)
 * and applies the key rules of the specification to every route in it:
 * a publishable key may call only the four plan reads (else 403 publishable_key_forbidden);
 * a read_only key may call only reads (else 403 api_key_read_only).
 */
@Injectable()
export class RoutePolicyMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    const state = requestState(request);
    const caller = callerOf(request);
    const match = matchRoute(request.method, request.path);
    if (!match.entry) {
      if (match.pathExists) response.setHeader('Allow', match.allowed.join(', '));
      const error = match.pathExists
        ? new ApiError(405, 'method_not_allowed', `${request.method} is not allowed on ${request.path}.`)
        : new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${request.path}).`);
      return sendApiError(response, error, state.requestId);
    }
    state.route = match.entry;
    state.params = match.params;
    if (caller.kind === 'publishable' && !match.entry.publishable) {
      return sendApiError(
        response,
        new ApiError(403, 'publishable_key_forbidden', 'A publishable key may only read plans (GET /v1/plans, /v1/plans/:id, /v1/plans/:id/tiers, /v1/plans/:id/price-components).'),
        state.requestId,
      );
    }
    if (caller.scope === 'read_only' && !match.entry.read) {
      return sendApiError(response, new ApiError(403, 'api_key_read_only', 'This key is read-only and cannot make changes.'), state.requestId);
    }
    next();
  }
}
