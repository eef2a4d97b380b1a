import type { Clock } from '@recur/kernel';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { callerOf } from '../http/request-context';
import { rateLimitClassOf, type RateLimiter } from './rate-limiter';

/**
 * Counts the request against its key's limit (a `/v1` hook, right after authentication:
 * routing/api-route.ts). Every answer to an authenticated request carries the key's
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (IETF draft RateLimit header
 * fields, seconds); over the limit it is `429 rate_limited` with `Retry-After`.
 */
export function enforceRateLimit(limiter: RateLimiter, now: Clock) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const caller = callerOf(request.raw);
    const kind = rateLimitClassOf(request.method);
    const decision = await limiter.take(caller.keyId, kind, limiter.limitOf(caller, kind), now().getTime());
    reply.header('RateLimit-Limit', decision.limit).header('RateLimit-Remaining', decision.remaining).header('RateLimit-Reset', decision.resetSeconds);
    if (decision.allowed) return;
    reply.header('Retry-After', decision.resetSeconds);
    throw new ApiError(429, 'rate_limited', `Too many requests: this key may make ${decision.limit} ${kind} requests a second. Retry after ${decision.resetSeconds} s.`);
  };
}
