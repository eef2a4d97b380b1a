import type { Clock } from '@recur/kernel';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { requestState } from '../http/request-context';
import { isWellFormedKey } from './api-key';
import { API_KEY_HEADER } from './api-key-header';
import type { ApiKeysRepository } from './api-keys.repository';

/**
 * Resolves `x-api-key` to the calling account, app, kind and scope (a `/v1` hook: routing/api-route.ts).
 * The key alone selects the app: there is no app header. Missing, malformed, unknown, revoked or
 * expired keys all answer 401 and reveal nothing else.
 */
export function authenticate(keys: ApiKeysRepository, now: Clock) {
  return async (request: FastifyRequest): Promise<void> => {
    const key = request.headers[API_KEY_HEADER];
    if (typeof key !== 'string' || !key) {
      throw new ApiError(401, 'api_key_missing', `No API key provided. Send your key in the ${API_KEY_HEADER} header.`);
    }
    const caller = isWellFormedKey(key) ? await keys.resolve(key, now()) : undefined;
    if (!caller) throw new ApiError(401, 'api_key_invalid', 'Invalid API key provided.');
    requestState(request.raw).caller = caller;
  };
}
