import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import type { JsonLogger } from '@recur/telemetry';
import { type Observable, throwError } from 'rxjs';
import { grpcFailure } from './grpc-failure';

/** Turns whatever a handler threw into a gRPC status with Recur's error trailers (`grpcFailure`). */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logger: JsonLogger) {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    const { payload, warning, unexpected } = grpcFailure(exception);
    if (warning) this.logger.warn(warning, 'GrpcExceptionFilter');
    if (unexpected) this.logger.error(exception instanceof Error ? exception : String(exception), 'GrpcExceptionFilter');
    return throwError(() => payload);
  }
}
