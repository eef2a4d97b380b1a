import { type GrpcErrorPayload, toGrpcError } from '@recur/contracts';
import { DomainError, isDomainError } from '@recur/kernel';
import { isDatabaseUnavailable } from '@recur/persistence';

/** What a service answers for a failure, and how it logs it (a domain error not at all: it is the caller's to handle). */
export interface GrpcFailure {
  payload: GrpcErrorPayload;
  /** A line to log as a warning: the failure is expected to pass. */
  warning?: string;
  /** Not foreseen: logged as an error with its stack. */
  unexpected?: true;
}

/**
 * The gRPC answer to whatever a handler threw. A command that did not run for a reason a retry
 * may not meet again answers UNAVAILABLE, which gRPC clients retry and the gateway answers 503,
 * logged as a warning, not as a bug to page about: Prisma's P2028 (an interactive transaction
 * could not start in time, every pooled connection busy, or expired before its commit) and a
 * database restarting or out of reach (`isDatabaseUnavailable`). Either way nothing was committed.
 * A domain error keeps its own status; anything else is INTERNAL, logged as an error.
 */
export function grpcFailure(exception: unknown): GrpcFailure {
  if (isDomainError(exception)) return { payload: toGrpcError(exception) };
  const detail = exception instanceof Error ? exception.message : String(exception);
  const transient = (exception as { code?: unknown } | null)?.code === 'P2028'
    ? { log: 'transaction did not run', message: 'The service is busy; retry shortly.' }
    : isDatabaseUnavailable(exception) ? { log: 'database unavailable', message: 'The service cannot reach its database; retry shortly.' } : undefined;
  if (transient) {
    return { payload: toGrpcError(new DomainError('unavailable', 'service_unavailable', transient.message)), warning: `${transient.log}: ${detail}` };
  }
  return { payload: toGrpcError(exception), unexpected: true };
}
