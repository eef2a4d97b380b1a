import type { Clock } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../auth/authenticate';
import type { ApiKeysRepository } from '../auth/api-keys.repository';
import type { AdmissionControl } from '../http/admission-control';
import { ApiError } from '../http/api-error';
import { sendApiError } from '../http/api-exception.filter';
import { applyInputRules } from '../http/input-rules';
import { callerOf, requestPath, requestState } from '../http/request-context';
import { claimIdempotencyKey, recordIdempotentAnswer } from '../idempotency/idempotency.hooks';
import type { IdempotencyRepository } from '../idempotency/idempotency.repository';
import { enforceRateLimit } from '../rate-limits/enforce-rate-limit';
import type { RateLimiter } from '../rate-limits/rate-limiter';
import { AlternativeAnswer, type FileAnswer } from './define-routes';
import type { RouteRunner } from './route-runner';
import { applyCors } from './cors';
import { applyRoutePolicy } from './route-policy';

/** What the `/v1` route needs from the application (app.ts takes them from Nest's container). */
export interface ApiRouteServices {
  admission: AdmissionControl;
  keys: ApiKeysRepository;
  rateLimits: RateLimiter;
  idempotency: IdempotencyRepository;
  clock: Clock;
  routes: RouteRunner;
  logger: JsonLogger;
}

/**
 * The `/v1` pipeline, one native Fastify route (`/v1` and everything under it, every method),
 * in order:
 *   onRequest   request id (app.ts, every request) → admission (http/admission-control.ts: over capacity,
 *               503 at once, before the body is read) → body parsed (http/body-parsers.ts) →
 *   preHandler  CORS (routing/cors.ts: a preflight of a publishable route answered 204) → authenticate (401) → the key's rate limit (429) →
 *               route table and key policy (404, 405 with `Allow`, 403) →
 *               door input rules (400) → idempotency claim (replay, 409) →
 *   handler     the RouteRunner: validation (400), the route's handler or 501 → gRPC call →
 *               the route's success status (its alternative's, or a file) →
 *   onSend      the idempotent answer stored → onResponse: the request timed (app.ts, every request).
 * Every failure on the way is answered by `sendApiError`, the one rendering the exception filter
 * of the other controllers uses too. Nest's router, middleware and interceptors are not on this
 * path: they cost 11 % of a single usage record's CPU (docs/performance.md).
 */
export function registerApiRoute(fastify: FastifyInstance, services: ApiRouteServices): void {
  const { routes, logger } = services;
  const options = {
    onRequest: services.admission.hook(),
    preHandler: [applyCors, authenticate(services.keys, services.clock), enforceRateLimit(services.rateLimits, services.clock), applyRoutePolicy, applyInputRules, claimIdempotencyKey(services.idempotency, services.clock)],
    onSend: recordIdempotentAnswer(services.idempotency),
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => sendApiError(error, request, reply, logger),
    handler: async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const state = requestState(request.raw);
      const route = state.route;
      if (!route) throw new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${requestPath(request.raw)}).`);
      const caller = callerOf(request.raw);
      const result = await routes.run(route, {
        tenant: caller.tenant,
        accountName: caller.accountName,
        commandId: state.commandId ?? state.requestId,
        params: state.params ?? {},
        body: request.body,
        query: { ...(request.query as Record<string, unknown>) },
      });
      if (route.alternative && result instanceof AlternativeAnswer) return reply.code(route.alternative.status).send(result.body);
      reply.code(route.status);
      if (route.file) {
        const { content, filename } = result as FileAnswer;
        return reply
          .header('Content-Type', route.file.contentType)
          .header('Content-Disposition', `attachment; filename="${filename}"`)
          .header('Content-Length', content.byteLength)
          .send(Buffer.from(content.buffer, content.byteOffset, content.byteLength));
      }
      return reply.send(result);
    },
  };
  fastify.all('/v1', options);
  fastify.all('/v1/*', options);
}
