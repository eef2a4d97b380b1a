import * as grpc from '@grpc/grpc-js';
import { create, type DescMethod, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';

/**
 * Calls between services hosted in one process (`npm start`) without the loopback gRPC hop:
 * grpc-js's HTTP/2 on both ends, its socket writes and OpenTelemetry's gRPC spans were about
 * 15 % of that process's busy time (docs/performance.md). A server registers the handlers it
 * serves under its address; a client (createServiceClient) whose peer address is registered
 * here calls the handler directly, as grpc-js would: with the request decoded from its own
 * bytes, and the answer or error turned back into what a wire call would give. Deployed apps,
 * one per process, register nothing and always go over the wire.
 */

/** A unary handler as grpc-js calls it (Nest's gRPC server builds these). */
export type UnaryHandler = (call: InProcessCall, callback: (error: unknown, response?: unknown) => void) => unknown;

/** The part of grpc-js's ServerUnaryCall a handler reads. */
export interface InProcessCall {
  request: unknown;
  metadata: grpc.Metadata;
  cancelled: boolean;
  getPeer(): string;
  getDeadline(): grpc.Deadline;
  getPath(): string;
}

/** Address (`host:port`) → RPC path (`/recur.x.v1.XService/Method`) → handler. */
const servedHere = new Map<string, Map<string, UnaryHandler>>();

/** Serves `handlers` (by RPC path) to in-process callers of `address`, until unregistered. */
export function registerInProcessHandlers(address: string, handlers: Record<string, UnaryHandler>): void {
  const byPath = servedHere.get(address) ?? new Map<string, UnaryHandler>();
  for (const [path, handler] of Object.entries(handlers)) byPath.set(path, handler);
  servedHere.set(address, byPath);
}

export function unregisterInProcessHandlers(address: string): void {
  servedHere.delete(address);
}

export function inProcessHandler(address: string, path: string): UnaryHandler | undefined {
  return servedHere.get(address)?.get(path);
}

/** The error a grpc-js client gets for a status: code, details and the server's trailers. */
function serviceError(code: grpc.status, details: string, metadata: grpc.Metadata): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** What grpc-js sends for an error a handler gave its callback: its status, or UNKNOWN. */
function asServiceError(error: unknown): grpc.ServiceError {
  const { code, details, metadata, message } = error as Partial<grpc.ServiceError>;
  return serviceError(
    typeof code === 'number' ? code : grpc.status.UNKNOWN,
    details ?? message ?? 'Unknown error',
    metadata instanceof grpc.Metadata ? metadata : new grpc.Metadata(),
  );
}

/**
 * Calls `handler` as a unary call of `method` would reach it: messages pass through their
 * protobuf bytes both ways (so caller and callee share no objects and see exactly the wire's
 * values), and the deadline fails the call with DEADLINE_EXCEEDED as grpc-js's would.
 */
export function callInProcess(handler: UnaryHandler, method: DescMethod, path: string, request: unknown, metadata: grpc.Metadata, deadline: number): Promise<unknown> {
  const decoded = fromBinary(method.input, toBinary(method.input, create(method.input, request as MessageInitShape<DescMethod['input']>)));
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded', new grpc.Metadata()));
    }, Math.max(0, deadline - Date.now()));
    const call: InProcessCall = { request: decoded, metadata, cancelled: false, getPeer: () => 'in-process', getDeadline: () => deadline, getPath: () => path };
    const callback = (error: unknown, response?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) return reject(asServiceError(error));
      try {
        resolve(fromBinary(method.output, toBinary(method.output, create(method.output, response as MessageInitShape<DescMethod['output']>))));
      } catch (encodeError) {
        // grpc-js answers INTERNAL when a response does not serialise.
        reject(serviceError(grpc.status.INTERNAL, `Response serialization failure: ${(encodeError as Error).message}`, new grpc.Metadata()));
      }
    };
    Promise.resolve(handler(call, callback)).catch((error: unknown) => callback(error));
  });
}
