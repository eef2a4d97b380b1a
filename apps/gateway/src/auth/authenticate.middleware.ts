import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { CLOCK, type Clock } from '@recur/kernel';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../http/api-error';
import { sendApiError } from '../http/api-exception.filter';
import { requestState } from '../http/request-context';
import { isWellFormedKey } from './api-key';
import { API_KEY_HEADER } from './api-key-header';
import { ApiKeysRepository } from './api-keys.repository';

/**
 * Resolves `x-api-key` to the calling account, app, kind and scope. The key alone
 * selects the app: there is no app header. Missing, malformed, unknown, revoked or
 * expired keys all answer 401 and reveal nothing else.
 */
@Injectable()
export class AuthenticateMiddleware implements NestMiddleware {
  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    const state = requestState(request);
    const key = request.header(API_KEY_HEADER);
    if (!key) {
      return sendApiError(response, new ApiError(401, 'api_key_missing', `No API key provided. Send your key in the ${API_KEY_HEADER} header.`), state.requestId);
    }
    let caller;
    try {
      caller = isWellFormedKey(key) ? await this.keys.resolve(key, this.now()) : undefined;
    } catch (error) {
      return next(error);
    }
    if (!caller) {
      return sendApiError(response, new ApiError(401, 'api_key_invalid', 'Invalid API key provided.'), state.requestId);
    }
    state.caller = caller;
    next();
  }
}
