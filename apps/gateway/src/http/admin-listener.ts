import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** Route templates served only on the admin listener: Prometheus metrics and the operator surface. */
const isAdminRoute = (route: string): boolean => route === '/metrics' || route === '/operator' || route.startsWith('/operator/');
/** Route templates served on both listeners: the probes. */
const isProbeRoute = (route: string): boolean => route === '/healthz' || route === '/readyz';

/**
 * The gateway's second listener, for what must never be public: `/metrics` (which names every
 * route's traffic) and `/operator/…` (which mints API keys with nothing but a bearer token). Both
 * listeners feed the one Fastify instance; each request is admitted by the route it matched
 * (its template, so no spelling of a path gets around it) and the listener it came in on: an
 * admin route on the public port, or any other route on the admin port, is answered 404 as an
 * unknown path is. The probes answer on both.
 */
export class AdminListener {
  private readonly arrived = new WeakSet<IncomingMessage>();
  private server?: Server;

  /** Adds the hook that sorts requests by listener; before the first request, i.e. before listen. */
  constructor(private readonly fastify: FastifyInstance) {
    fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const route = request.routeOptions.url ?? '';
      if (isProbeRoute(route) || isAdminRoute(route) === this.arrived.has(request.raw)) {
        done();
        return;
      }
      reply.callNotFound();
    });
  }

  /** Listens; resolves to the port (`port` 0 picks a free one). */
  async listen(port: number, host: string): Promise<number> {
    const server = createServer((request, response) => {
      this.arrived.add(request);
      this.fastify.routing(request, response);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }
}
