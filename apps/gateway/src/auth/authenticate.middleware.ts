import type { ServerResponse } from 'node:http';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { CLOCK, type Clock } from '@recur/kernel';
import { ApiError } from '../http/api-error';
import { type MiddlewareRequest, requestState } from '../http/request-context';
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

  async use(request: MiddlewareRequest, _response: ServerResponse, next: (error?: unknown) => void): Promise<void> {
    const state = requestState(request);
    const key = request.headers[API_KEY_HEADER];
    if (typeof key !== 'string' || !key) {
      return next(new ApiError(401, 'api_key_missing', `No API key provided. Send your key in the ${API_KEY_HEADER} header.`));
    }
    let caller;
    try {
      caller = isWellFormedKey(key) ? await this.keys.resolve(key, this.now()) : undefined;
    } catch (error) {
      return next(error);
    }
    if (!caller) {
      return next(new ApiError(401, 'api_key_invalid', 'Invalid API key provided.'));
    }
    state.caller = caller;
    next();
  }
}
