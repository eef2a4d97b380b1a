import * as grpc from '@grpc/grpc-js';
import { DomainError, type ErrorKind, isDomainError } from '@recur/kernel';

/**
 * Domain errors cross gRPC as a status plus two trailers: `recur-error-code` (stable
 * machine code) and `recur-error-param` (offending field). This file is the one place
 * that maps error kinds to gRPC status codes, both ways.
 */
export const ERROR_CODE_TRAILER = 'recur-error-code';
export const ERROR_PARAM_TRAILER = 'recur-error-param';

const STATUS_BY_KIND: Record<ErrorKind, grpc.status> = {
  invalid_argument: grpc.status.INVALID_ARGUMENT,
  not_found: grpc.status.NOT_FOUND,
  already_exists: grpc.status.ALREADY_EXISTS,
  conflict: grpc.status.ABORTED,
  failed_precondition: grpc.status.FAILED_PRECONDITION,
  unauthenticated: grpc.status.UNAUTHENTICATED,
  permission_denied: grpc.status.PERMISSION_DENIED,
  resource_exhausted: grpc.status.RESOURCE_EXHAUSTED,
  unavailable: grpc.status.UNAVAILABLE,
  internal: grpc.status.INTERNAL,
};

const KIND_BY_STATUS = new Map<grpc.status, ErrorKind>(
  Object.entries(STATUS_BY_KIND).map(([kind, status]) => [status, kind as ErrorKind]),
);

/** The object grpc-js accepts as a call's error: status, details and trailers. */
export interface GrpcErrorPayload {
  code: grpc.status;
  details: string;
  metadata: grpc.Metadata;
}

export function toGrpcError(error: unknown): GrpcErrorPayload {
  const metadata = new grpc.Metadata();
  if (isDomainError(error)) {
    metadata.set(ERROR_CODE_TRAILER, error.code);
    if (error.param) metadata.set(ERROR_PARAM_TRAILER, error.param);
    return { code: STATUS_BY_KIND[error.kind], details: error.message, metadata };
  }
  metadata.set(ERROR_CODE_TRAILER, 'internal_error');
  return { code: grpc.status.INTERNAL, details: 'An internal error occurred.', metadata };
}

function isServiceError(error: unknown): error is grpc.ServiceError {
  return typeof error === 'object' && error !== null && 'code' in error && 'metadata' in error;
}

/** Turns a failed call back into a DomainError; transport failures become `unavailable`. */
export function fromGrpcError(error: unknown): DomainError {
  if (!isServiceError(error)) return new DomainError('internal', 'internal_error', 'An internal error occurred.');
  const code = error.metadata.get(ERROR_CODE_TRAILER)[0]?.toString();
  const param = error.metadata.get(ERROR_PARAM_TRAILER)[0]?.toString();
  if (code) {
    return new DomainError(KIND_BY_STATUS.get(error.code) ?? 'internal', code, error.details, param);
  }
  if (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED) {
    return new DomainError('unavailable', 'service_unavailable', 'A service is temporarily unavailable; retry later.');
  }
  // A method the peer's release does not have yet: a caller upgraded before its service, during a
  // rolling upgrade (docs/operations/upgrades.md#version-skew-tested). Retrying once it rolled works.
  if (error.code === grpc.status.UNIMPLEMENTED) {
    return new DomainError('unavailable', 'service_unavailable', 'A service does not offer this yet (it is being upgraded); retry later.');
  }
  return new DomainError('internal', 'internal_error', 'An internal error occurred.');
}
