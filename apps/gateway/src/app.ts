import 'reflect-metadata';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { applyMigrations } from '@recur/persistence';
import { CLOCK, type Clock } from '@recur/kernel';
import { JsonLogger } from '@recur/telemetry';
import type { GatewayConfig } from './config';
import { GatewayModule } from './gateway.module';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { RequestIdMiddleware } from './http/request-id.middleware';
import { createValidationPipe } from './http/validation';
import { IdempotencyRepository } from './idempotency/idempotency.repository';

export const GATEWAY_MIGRATIONS_DIR = join(__dirname, '..', 'prisma', 'migrations');
/** Largest accepted JSON body. */
export const BODY_LIMIT = '256kb';

export interface RunningGateway {
  port: number;
  stop(): Promise<void>;
}

export async function startGateway(config: GatewayConfig): Promise<RunningGateway> {
  const logger = new JsonLogger('gateway');
  if (config.migrateOnStart) {
    const { applied } = await applyMigrations({ databaseUrl: config.databaseUrl, migrationsDir: GATEWAY_MIGRATIONS_DIR });
    if (applied.length > 0) logger.info('migrations applied', { applied });
  }
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forConfig(config), { logger, bodyParser: false });
  // The request id comes first, so even a body that fails to parse gets one.
  const requestId = new RequestIdMiddleware();
  app.use(requestId.use.bind(requestId));
  // Provider callbacks are verified over their exact bytes; the payer pages post forms.
  app.use('/callbacks', express.raw({ type: () => true, limit: '64kb' }));
  app.use(['/sandbox/pay', '/pay'], express.urlencoded({ extended: false, limit: '8kb' }));
  // The portals' pages post forms.
  app.use(['/portal', '/customer-portal', '/buy'], express.urlencoded({ extended: false, limit: '16kb' }));
  app.useBodyParser('json', { limit: BODY_LIMIT });
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ApiExceptionFilter(logger));
  app.disable('x-powered-by');
  await app.listen(config.httpPort, config.httpHost);
  const port = (app.getHttpServer().address() as { port: number }).port;

  // Idempotency records older than their 24 h retention are purged hourly.
  const idempotency = app.get(IdempotencyRepository);
  const clock = app.get<Clock>(CLOCK);
  const purge = setInterval(() => {
    idempotency.purgeExpired(clock()).catch((error: Error) => logger.warn(`idempotency purge failed: ${error.message}`));
  }, 3_600_000).unref();

  logger.info('gateway started', { http_port: port });
  return {
    port,
    async stop() {
      clearInterval(purge);
      await app.close();
      logger.info('gateway stopped');
    },
  };
}
