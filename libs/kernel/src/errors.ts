/**
 * Domain errors carry a stable string code that survives process boundaries
 * (gRPC trailers, HTTP bodies); `instanceof` does not. The kind says which family
 * of failure it is; transports map kinds to their own status codes in one place each.
 */
export type ErrorKind =
  | 'invalid_argument'
  | 'not_found'
  | 'already_exists'
  | 'conflict'
  | 'failed_precondition'
  | 'unauthenticated'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'unavailable'
  | 'internal';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidArgument = (param: string, message: string, code = 'parameter_invalid') =>
  new DomainError('invalid_argument', code, message, param);

export const notFound = (resource: string, id: string) =>
  new DomainError('not_found', 'resource_missing', `No such ${resource}: '${id}'`, 'id');

export const failedPrecondition = (code: string, message: string) =>
  new DomainError('failed_precondition', code, message);

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
