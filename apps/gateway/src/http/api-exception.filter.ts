import type { IncomingMessage } from 'node:http';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { fromGrpcError } from '@recur/contracts';
import { DomainError, isDomainError } from '@recur/kernel';
import { isDatabaseUnavailable } from '@recur/persistence';
import type { JsonLogger } from '@recur/telemetry';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiErrorFromDomain, errorBody } from './api-error';
import { requestPath, requestState } from './request-context';

/**
 * Every failure leaves the gateway in the one error shape; `sendApiError` is where that happens.
 * The `/v1` route's error handler (routing/api-route.ts) calls it for its hooks' refusals, its
 * handler's exceptions and Fastify's own failures on it (a body over the limit, say); this filter
 * calls it for the other controllers and for what Fastify refuses before any route.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendApiError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), this.logger);
  }
}

/** Answers a failure in the API's error shape, with its status; a 5xx is logged. */
export function sendApiError(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: JsonLogger): void {
  const error = apiErrorOf(exception, request.raw);
  // A 503 is a peer or database away for a moment (the client retries); a 500 is a bug.
  if (error.status === 503) logger.warn(`${error.code}: ${exception instanceof Error ? exception.message : String(exception)}`, 'ApiExceptionFilter');
  else if (error.status >= 500) logger.error(exception instanceof Error ? exception : String(exception), 'ApiExceptionFilter');
  reply.code(error.status).send(errorBody(error, requestState(request.raw)?.requestId ?? 'req_unknown'));
}

/** Any failure as the API's error: ours, a domain error, Nest's or Fastify's HTTP errors, or a failed gRPC call. */
export function apiErrorOf(exception: unknown, request: IncomingMessage): ApiError {
  if (exception instanceof ApiError) return exception;
  if (isDomainError(exception)) return apiErrorFromDomain(exception);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) return new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${requestPath(request)}).`);
    if (status === 413) return payloadTooLarge();
    if (status === 400) return new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    return new ApiError(status, 'http_error', exception.message);
  }
  if (isFastifyError(exception)) return exception.statusCode === 413 ? payloadTooLarge() : new ApiError(exception.statusCode, 'http_error', exception.message);
  // A failed gRPC call: its status and trailers carry the domain error.
  if (typeof exception === 'object' && exception !== null && 'metadata' in exception) return apiErrorFromDomain(fromGrpcError(exception));
  // The gateway's own database (keys, idempotency records, rate-limit windows) restarting or out of reach.
  if (isDatabaseUnavailable(exception)) return apiErrorFromDomain(new DomainError('unavailable', 'service_unavailable', 'The service cannot reach its database; retry shortly.'));
  return new ApiError(500, 'internal_error', 'An internal error occurred.');
}

export function payloadTooLarge(): ApiError {
  return new ApiError(413, 'payload_too_large', 'The request body is larger than 256 KB.');
}

/** Fastify's refusals of a request (`FST_ERR_…`: a body over the limit, a malformed URL) carry their 4xx status. */
function isFastifyError(exception: unknown): exception is Error & { code: string; statusCode: number } {
  if (!(exception instanceof Error)) return false;
  const { code, statusCode } = exception as Error & { code?: unknown; statusCode?: unknown };
  return typeof code === 'string' && code.startsWith('FST_') && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500;
}
