import { createServer, type Server } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

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

export const admissionInFlight = new Gauge({
  name: 'recur_http_admission_in_flight',
  help: 'API requests the gateway is working on (admission control: at most recur_http_admission_limit).',
  registers: [metricsRegistry],
});

export const admissionLimit = new Gauge({
  name: 'recur_http_admission_limit',
  help: 'The adaptive limit of API requests in flight (ADMISSION_MIN_IN_FLIGHT to ADMISSION_MAX_IN_FLIGHT).',
  registers: [metricsRegistry],
});

export const admissionQueued = new Gauge({
  name: 'recur_http_admission_queued',
  help: 'API requests waiting for a slot (admission control: at most ADMISSION_MAX_QUEUED).',
  registers: [metricsRegistry],
});

export const admissionRefused = new Counter({
  name: 'recur_http_admission_refused_total',
  help: 'API requests answered 503 service_unavailable by admission control: the queue was full, or they waited too long.',
  labelNames: ['reason'] as const,
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
