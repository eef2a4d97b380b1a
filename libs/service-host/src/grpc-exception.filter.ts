import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import { toGrpcError } from '@recur/contracts';
import { isDomainError } from '@recur/kernel';
import type { JsonLogger } from '@recur/telemetry';
import { type Observable, throwError } from 'rxjs';

/** Turns whatever a handler threw into a gRPC status with Recur's error trailers. */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    if (!isDomainError(exception)) this.logger.error(exception instanceof Error ? exception : String(exception), 'GrpcExceptionFilter');
    return throwError(() => toGrpcError(exception));
  }
}
