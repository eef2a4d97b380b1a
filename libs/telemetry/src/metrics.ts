import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * One Prometheus registry per process. Metric names carry a `service` label so the
 * single-process `npm start` host and one-process-per-app deployments read the same.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

export const rpcDuration = new Histogram({
  name: 'recur_rpc_server_duration_seconds',
  help: 'Duration of handled gRPC calls.',
  labelNames: ['service', 'method', 'code'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

export const httpDuration = new Histogram({
  name: 'recur_http_server_duration_seconds',
  help: 'Duration of handled HTTP requests at the gateway.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

export const eventsPublished = new Counter({
  name: 'recur_outbox_events_published_total',
  help: 'Events relayed from an outbox to the bus.',
  labelNames: ['service', 'topic'] as const,
  registers: [metricsRegistry],
});

export const outboxRowsPurged = new Counter({
  name: 'recur_outbox_rows_purged_total',
  help: 'Published outbox rows deleted once older than the retention (OUTBOX_RETENTION_HOURS).',
  labelNames: ['service'] as const,
  registers: [metricsRegistry],
});

export const eventsConsumed = new Counter({
  name: 'recur_events_consumed_total',
  help: 'Events handled by a consumer; duplicates are counted apart.',
  labelNames: ['service', 'type', 'outcome'] as const,
  registers: [metricsRegistry],
});

/** Serves `/metrics` on its own port (the gRPC services have no HTTP server otherwise). */
export function startMetricsServer(port: number, host = '0.0.0.0'): Promise<Server> {
  const server = createServer(async (request, response) => {
    if (request.url !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': metricsRegistry.contentType });
    response.end(await metricsRegistry.metrics());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
