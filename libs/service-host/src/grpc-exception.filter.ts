import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import { toGrpcError } from '@recur/contracts';
import { DomainError, isDomainError } from '@recur/kernel';
import { isDatabaseUnavailable } from '@recur/persistence';
import type { JsonLogger } from '@recur/telemetry';
import { type Observable, throwError } from 'rxjs';

/**
 * Prisma's P2028: an interactive transaction could not start in time (every pooled
 * connection busy) or expired before its commit. Either way nothing was committed, so the
 * caller may repeat the command: it answers UNAVAILABLE, which gRPC clients retry.
 */
function isTransactionNotRun(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2028';
}

/** Turns whatever a handler threw into a gRPC status with Recur's error trailers. */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    if (isTransactionNotRun(exception)) {
      this.logger.warn(`transaction did not run: ${(exception as Error).message}`, 'GrpcExceptionFilter');
      return throwError(() => toGrpcError(new DomainError('unavailable', 'service_unavailable', 'The service is busy; retry shortly.')));
    }
    // The database restarting or out of reach: the caller retries (503 at the gateway), not a bug to page about.
    if (!isDomainError(exception) && isDatabaseUnavailable(exception)) {
      this.logger.warn(`database unavailable: ${(exception as Error).message}`, 'GrpcExceptionFilter');
      return throwError(() => toGrpcError(new DomainError('unavailable', 'service_unavailable', 'The service cannot reach its database; retry shortly.')));
    }
    if (!isDomainError(exception)) this.logger.error(exception instanceof Error ? exception : String(exception), 'GrpcExceptionFilter');
    return throwError(() => toGrpcError(exception));
  }
}
