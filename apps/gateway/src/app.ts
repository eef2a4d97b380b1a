import 'reflect-metadata';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { applyMigrations } from '@recur/persistence';
import { CLOCK, type Clock } from '@recur/kernel';
import { JsonLogger } from '@recur/telemetry';
import type { GatewayConfig } from './config';
import { GatewayModule } from './gateway.module';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { BODY_LIMIT_BYTES, registerBodyParser } from './http/body-parsers';
import { AdminListener } from './http/admin-listener';
import { AdmissionControl } from './http/admission-control';
import { assignRequestId } from './http/request-id';
import { recordHttpDuration } from './http/http-metrics';
import { registerServerSpan } from './http/server-span';
import { createValidationPipe } from './http/validation';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { ApiKeysRepository } from './auth/api-keys.repository';
import { registerApiRoute } from './routing/api-route';
import { RouteRunner } from './routing/route-runner';
import { RateLimiter } from './rate-limits/rate-limiter';

export const GATEWAY_MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');

export interface RunningGateway {
  port: number;
  /** The admin listener's port (/metrics, /operator/…). */
  adminPort: number;
  stop(): Promise<void>;
}

export async function startGateway(config: GatewayConfig): Promise<RunningGateway> {
  const logger = new JsonLogger('gateway');
  if (config.migrateOnStart) {
    const { applied } = await applyMigrations({ databaseUrl: config.databaseUrl, migrationsDir: GATEWAY_MIGRATIONS_DIR });
    if (applied.length > 0) logger.info('migrations applied', { applied });
  }
  // Paths match as they did on Express: a trailing slash names the same page, and a page token or
  // an id longer than Fastify's default 100 characters reaches its handler (no 414).
  const adapter = new FastifyAdapter({ skipMiddie: true, bodyLimit: BODY_LIMIT_BYTES, routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 } });
  // The server span's hooks come before every other hook, so the request's whole work runs in it.
  registerServerSpan(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forConfig(config), adapter, { logger, bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance();
  // The request id comes first, so even a body that fails to parse gets one.
  fastify.addHook('onRequest', assignRequestId);
  const admin = new AdminListener(fastify);
  fastify.addHook('onResponse', recordHttpDuration);
  registerBodyParser(fastify);
  // Fastify refuses a QUERY without a Content-Type (400) before any hook; no route takes
  // QUERY, so it is read as bodiless and reaches the route table's 405 like any other method.
  fastify.addHttpMethod('QUERY', { hasBody: false, overrideExisting: true });
  const idempotency = app.get(IdempotencyRepository);
  const clock = app.get<Clock>(CLOCK);
  // The `/v1` API: a native Fastify route, its pipeline as hooks (routing/api-route.ts).
  registerApiRoute(fastify, { admission: new AdmissionControl(config.admission), keys: app.get(ApiKeysRepository), rateLimits: app.get(RateLimiter), idempotency, clock, routes: app.get(RouteRunner), logger });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ApiExceptionFilter(logger));
  await app.listen(config.httpPort, config.httpHost);
  const port = (app.getHttpServer().address() as { port: number }).port;
  let adminPort: number;
  try {
    adminPort = await admin.listen(config.adminPort, config.adminHost);
  } catch (error) {
    await app.close();
    throw error;
  }

  // Idempotency records older than their 24 h retention are purged hourly.
  const purge = setInterval(() => {
    idempotency.purgeExpired(clock()).catch((error: Error) => logger.warn(`idempotency purge failed: ${error.message}`));
  }, 3_600_000).unref();

  logger.info('gateway started', { http_port: port, admin_port: adminPort });
  return {
    port,
    adminPort,
    async stop() {
      clearInterval(purge);
      await admin.close();
      await app.close();
      logger.info('gateway stopped');
    },
  };
}
