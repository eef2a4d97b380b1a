import type { ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import { checkJsonBody, checkPathParams, checkQuery } from './input-rules';
import { type MiddlewareRequest, requestState } from './request-context';

/**
 * Applies the door rules (input-rules.ts) once the route is matched and before the idempotency
 * key is claimed, so a refused request is never stored under its key.
 */
@Injectable()
export class InputRulesMiddleware implements NestMiddleware {
  use(request: MiddlewareRequest, _response: ServerResponse, next: (error?: unknown) => void): void {
    const state = requestState(request);
    next(checkPathParams(state.params ?? {}) ?? checkQuery(request.query) ?? checkJsonBody(request.body));
  }
}
