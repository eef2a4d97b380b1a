import { ServerGrpc } from '@nestjs/microservices';
import { registerInProcessHandlers, type UnaryHandler } from '@recur/contracts';

type GrpcServerOptions = ConstructorParameters<typeof ServerGrpc>[0];

/**
 * Nest's gRPC server that also serves in-process callers: every handler it builds for grpc-js
 * is registered under the server's address too, so a client in the same process
 * (createServiceClient) calls it without the loopback hop. The handlers are Nest's own, so
 * interceptors, filters and the error trailers run exactly as for a wire call.
 */
export class InProcessServerGrpc extends ServerGrpc {
  constructor(
    options: GrpcServerOptions,
    private readonly address: string,
  ) {
    super(options);
  }

  override async createService(grpcService: { service?: Record<string, { path?: string }> }, name: string): Promise<Record<string, unknown>> {
    const implementation = (await super.createService(grpcService, name)) as Record<string, UnaryHandler>;
    const byPath: Record<string, UnaryHandler> = {};
    for (const [methodName, handler] of Object.entries(implementation)) {
      const path = grpcService.service?.[methodName]?.path;
      if (path) byPath[path] = handler;
    }
    registerInProcessHandlers(this.address, byPath);
    return implementation;
  }
}
