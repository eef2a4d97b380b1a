import { DomainError, type ErrorKind } from '@recur/kernel';

/**
 * The one error shape of the API (docs/api/conventions.md#errors):
 *   { "error": { "type", "code", "message", "param"?, "errors"?, "request_id" } }
 * `code` is stable and machine-readable; `param` names the offending field;
 * `errors` lists every invalid field when validation finds several.
 */
export interface FieldError {
  param: string;
  code: string;
  message: string;
}

export interface ApiErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: FieldError[];
    request_id: string;
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
  }
}

/** The one table from error kind to HTTP status (grpc-gateway's HTTPStatusFromCode, in kinds). */
const HTTP_STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  conflict: 409,
  failed_precondition: 409,
  resource_exhausted: 429,
  internal: 500,
  unavailable: 503,
};

export function apiErrorFromDomain(error: DomainError): ApiError {
  return new ApiError(HTTP_STATUS_BY_KIND[error.kind], error.code, error.message, error.param);
}

const IDEMPOTENCY_CODES = new Set(['idempotency_key_reused', 'idempotency_key_in_progress', 'idempotency_key_invalid']);

function errorType(status: number, code: string): string {
  if (IDEMPOTENCY_CODES.has(code)) return 'idempotency_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function errorBody(error: ApiError, requestId: string): ApiErrorBody {
  return {
    error: {
      type: errorType(error.status, error.code),
      code: error.code,
      message: error.message,
      ...(error.param ? { param: error.param } : {}),
      ...(error.errors && error.errors.length > 0 ? { errors: error.errors } : {}),
      request_id: requestId,
    },
  };
}
