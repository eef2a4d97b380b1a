import 'reflect-metadata';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type MicroserviceOptions, Transport } from '@nestjs/microservices';
import type { DescService } from '@bufbuild/protobuf';
import { grpcPackageDefinition, unregisterInProcessHandlers } from '@recur/contracts';
import { createEventBus, type EventBus, InProcessEventBus, OutboxRelay } from '@recur/messaging';
import { systemClock } from '@recur/kernel';
import { applyMigrations, CommandResultsPurge } from '@recur/persistence';
import { SERVICE_PLATFORM_MIGRATIONS } from './platform-migrations';
import { JsonLogger, startMetricsServer } from '@recur/telemetry';
import { HealthImplementation } from 'grpc-health-check';
import type { Server as HttpServer } from 'node:http';
import type { ServiceConfig } from './config';
import { GrpcExceptionFilter } from './grpc-exception.filter';
import { InProcessServerGrpc } from './in-process-server';
import { RpcMetricsInterceptor } from './rpc-metrics.interceptor';
import { UnknownRequestFieldsInterceptor } from './unknown-request-fields.interceptor';

/** What a service's Nest module receives: its configuration, the bus and a logger. */
export interface ServiceRuntime {
  name: string;
  config: ServiceConfig;
  bus: EventBus;
  logger: JsonLogger;
}

export const SERVICE_RUNTIME = Symbol('SERVICE_RUNTIME');

export interface GrpcServiceSpec {
  /** Short name: `subscription`, `webhook-dispatch`, … */
  name: string;
  /** The generated services this process serves. */
  services: DescService[];
  /** The service's Nest module, built from its runtime. */
  module: (runtime: ServiceRuntime) => DynamicModule;
  /** Prisma-format migrations folder of the service's own database. */
  migrationsDir: string;
  /** True when the service writes an outbox that must be relayed to the bus. */
  relaysOutbox: boolean;
  /** True when the service records command answers (`command_results`), which a purge job then expires. */
  keepsCommandResults: boolean;
}

export interface RunningService {
  name: string;
  grpcPort: number;
  stop(): Promise<void>;
}

/**
 * Starts one service: migrations, the Nest gRPC server (with grpc.health.v1), the outbox
 * relay, the command-results purge and the metrics endpoint. Health turns SERVING only when all of it is up, and
 * NOT_SERVING first on stop, so load balancers drain before the server closes.
 */
export async function startGrpcService(spec: GrpcServiceSpec, config: ServiceConfig, bus?: EventBus): Promise<RunningService> {
  const logger = new JsonLogger(spec.name);
  if (config.migrateOnStart) {
    const { applied } = await applyMigrations({ databaseUrl: config.databaseUrl, migrationsDir: spec.migrationsDir, libraries: SERVICE_PLATFORM_MIGRATIONS });
    if (applied.length > 0) logger.info('migrations applied', { applied });
  }

  const eventBus = bus ?? createEventBus(`recur-${spec.name}`, process.env, (level, message) => logger.warn(`kafka ${level}: ${message}`));
  const runtime: ServiceRuntime = { name: spec.name, config, bus: eventBus, logger };
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  const servedServices = spec.services.filter((service) => service.methods.length > 0);

  const address = `${config.grpcHost}:${config.grpcPort}`;
  const grpcOptions = {
    url: address,
    package: [...new Set(servedServices.map((service) => service.file.proto.package ?? ''))],
    packageDefinition: grpcPackageDefinition(...servedServices),
    onLoadPackageDefinition: (_definition: unknown, server: Parameters<HealthImplementation['addToServer']>[0]) => health.addToServer(server),
    gracefulShutdown: true,
  };
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    spec.module(runtime),
    config.inProcessCalls ? { logger, strategy: new InProcessServerGrpc(grpcOptions, address) } : { logger, transport: Transport.GRPC, options: grpcOptions },
  );
  app.useGlobalFilters(new GrpcExceptionFilter(logger));
  app.useGlobalInterceptors(new RpcMetricsInterceptor(spec.name), new UnknownRequestFieldsInterceptor(spec.name));
  await app.listen();
  // A bus of its own without Kafka reaches only this app, whose consumers have all subscribed now
  // (Nest's bootstrap ran in listen()). A bus given by the host is the host's to open.
  if (!bus && eventBus instanceof InProcessEventBus) eventBus.open();

  const relay = spec.relaysOutbox
    ? new OutboxRelay({
      service: spec.name,
      databaseUrl: config.databaseUrl,
      bus: eventBus,
      clock: systemClock,
      retentionMs: config.outboxRetentionHours === undefined ? undefined : config.outboxRetentionHours * 60 * 60 * 1000,
      log: (message, fields) => logger.info(message, fields),
    })
    : undefined;
  await relay?.start();
  const purge = spec.keepsCommandResults
    ? new CommandResultsPurge({ databaseUrl: config.databaseUrl, clock: systemClock, log: (message, fields) => logger.info(message, fields) })
    : undefined;
  await purge?.start();

  let metricsServer: HttpServer | undefined;
  if (config.metricsPort > 0) metricsServer = await startMetricsServer(config.metricsPort);

  for (const service of ['', ...servedServices.map((s) => s.typeName)]) health.setStatus(service, 'SERVING');
  logger.info('service started', { grpc_port: config.grpcPort, metrics_port: config.metricsPort || null });

  return {
    name: spec.name,
    grpcPort: config.grpcPort,
    async stop() {
      for (const service of ['', ...servedServices.map((s) => s.typeName)]) health.setStatus(service, 'NOT_SERVING');
      if (config.inProcessCalls) unregisterInProcessHandlers(address);
      await relay?.stop();
      await purge?.stop();
      await app.close();
      if (!bus) await eventBus.close();
      await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
      logger.info('service stopped');
    },
  };
}
