import type { components } from './generated/openapi';

/** The error body every failed call answers (docs/api/conventions.md#errors). */
export type ErrorBody = components['schemas']['Error']['error'];
export type ErrorType = ErrorBody['type'];

/**
 * A call Recur refused or could not serve: the documented error shape, with the HTTP status and
 * the `Request-Id` to quote. `instanceof` tells the kind: {@link InvalidRequestError} (400, 404,
 * 409, 413, 415), {@link AuthenticationError} (401), {@link PermissionError} (403),
 * {@link IdempotencyError}, {@link RateLimitError} (429), {@link ApiError} (5xx).
 */
export class RecurError extends Error {
  readonly type: ErrorType;
  readonly code: string;
  readonly param?: string;
  readonly errors?: ErrorBody['errors'];
  readonly requestId?: string;

  constructor(
    readonly status: number,
    body: ErrorBody,
    readonly headers?: Headers,
  ) {
    super(body.message);
    this.name = new.target.name;
    this.type = body.type;
    this.code = body.code;
    this.param = body.param;
    this.errors = body.errors;
    this.requestId = body.request_id ?? headers?.get('request-id') ?? undefined;
  }
}

export class InvalidRequestError extends RecurError {}
export class AuthenticationError extends RecurError {}
export class PermissionError extends RecurError {}
export class IdempotencyError extends RecurError {}
export class RateLimitError extends RecurError {}
export class ApiError extends RecurError {}

/** No answer at all: the connection failed or timed out on every attempt. */
export class ConnectionError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'ConnectionError';
  }
}

const CLASSES: Record<ErrorType, typeof RecurError> = {
  invalid_request_error: InvalidRequestError,
  authentication_error: AuthenticationError,
  permission_error: PermissionError,
  idempotency_error: IdempotencyError,
  rate_limit_error: RateLimitError,
  api_error: ApiError,
};

function isErrorBody(value: unknown): value is { error: ErrorBody } {
  const error = (value as { error?: Partial<ErrorBody> } | undefined)?.error;
  return typeof error?.type === 'string' && typeof error.code === 'string' && typeof error.message === 'string';
}

/** The typed error of a failed answer; an answer without the documented body (a proxy's 502, say) is an ApiError or InvalidRequestError by status. */
export function errorFromResponse(status: number, body: unknown, headers?: Headers): RecurError {
  if (isErrorBody(body)) return new (CLASSES[body.error.type] ?? RecurError)(status, body.error, headers);
  const type: ErrorType = status >= 500 ? 'api_error' : status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error';
  const text = typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : '';
  return new CLASSES[type](status, { type, code: `http_${status}`, message: `HTTP ${status} without Recur's error body${text}`, request_id: headers?.get('request-id') ?? '' }, headers);
}
