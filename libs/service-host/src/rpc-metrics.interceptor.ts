import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { toGrpcError } from '@recur/contracts';
import { rpcDuration } from '@recur/telemetry';
import { type Observable, tap } from 'rxjs';

/** Records every handled RPC in `recur_rpc_server_duration_seconds`. */
@Injectable()
export class RpcMetricsInterceptor implements NestInterceptor {
  constructor(private readonly service: string) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const stop = rpcDuration.startTimer({ service: this.service, method: context.getHandler().name });
    return next.handle().pipe(
      tap({
        next: () => stop({ code: 'OK' }),
        error: (error: unknown) => stop({ code: String(toGrpcError(error).code) }),
      }),
    );
  }
}
