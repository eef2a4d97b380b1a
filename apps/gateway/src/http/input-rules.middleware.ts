import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { sendApiError } from './api-exception.filter';
import { checkJsonBody, checkPathParams, checkQuery } from './input-rules';
import { requestState } from './request-context';

/**
 * Applies the door rules (input-rules.ts) once the route is matched and before the idempotency
 * key is claimed, so a refused request is never stored under its key.
 */
@Injectable()
export class InputRulesMiddleware implements NestMiddleware {
  use(request: Request, response: Response, next: NextFunction): void {
    const state = requestState(request);
    const refusal = checkPathParams(state.params ?? {}) ?? checkQuery(request.query as Record<string, unknown>) ?? checkJsonBody(request.body);
    if (refusal) return sendApiError(response, refusal, state.requestId);
    next();
  }
}
