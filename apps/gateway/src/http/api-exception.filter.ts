import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { fromGrpcError } from '@recur/contracts';
import { isDomainError } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import type { Request, Response } from 'express';
import { ApiError, apiErrorFromDomain, errorBody } from './api-error';
import { requestState } from './request-context';

/** Every failure leaves the gateway in the one error shape; this is where that happens. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = apiErrorOf(exception, request);
    if (error.status >= 500) this.logger.error(exception instanceof Error ? exception : String(exception), 'ApiExceptionFilter');
    sendApiError(response, error, requestState(request)?.requestId ?? 'req_unknown');
  }
}

export function sendApiError(response: Response, error: ApiError, requestId: string): void {
  response.status(error.status).json(errorBody(error, requestId));
}

/** Any failure as the API's error: ours, a domain error, Nest's HTTP exceptions, or a failed gRPC call. */
export function apiErrorOf(exception: unknown, request: Request): ApiError {
  if (exception instanceof ApiError) return exception;
  if (isDomainError(exception)) return apiErrorFromDomain(exception);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) return new ApiError(404, 'route_not_found', `Unrecognized request URL (${request.method} ${request.path}).`);
    if (status === 413) return new ApiError(413, 'payload_too_large', 'The request body is larger than 256 KB.');
    if (status === 400) return new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    return new ApiError(status, 'http_error', exception.message);
  }
  // A failed gRPC call: its status and trailers carry the domain error.
  if (typeof exception === 'object' && exception !== null && 'metadata' in exception) return apiErrorFromDomain(fromGrpcError(exception));
  return new ApiError(500, 'internal_error', 'An internal error occurred.');
}
