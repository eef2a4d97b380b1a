import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { CLOCK, systemClock } from '@recur/kernel';
import { JsonLogger } from '@recur/telemetry';
import { AccountsService } from './accounts/accounts.service';
import { OperatorController } from './accounts/operator.controller';
import { OperatorTokenGuard } from './accounts/operator-token.guard';
import { ApiKeysRepository } from './auth/api-keys.repository';
import { AuthenticateMiddleware } from './auth/authenticate.middleware';
import { GATEWAY_CONFIG, type GatewayConfig } from './config';
import { HealthController } from './health/health.controller';
import { HttpMetricsMiddleware } from './http/http-metrics.middleware';
import { InputRulesMiddleware } from './http/input-rules.middleware';
import { IdempotencyMiddleware } from './idempotency/idempotency.middleware';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { PrismaService } from './infrastructure/prisma.service';
import { ServiceClients } from './infrastructure/service-clients';
import { OpenApiController } from './openapi/openapi.controller';
import { CheckoutController } from './pages/checkout/checkout.controller';
import { InvoicePaymentController } from './pages/invoice-payment/invoice-payment.controller';
import { PayerPagesController } from './pages/payer-pages.controller';
import { ProviderCallbacksController } from './pages/provider-callbacks.controller';
import { CustomerPortalController } from './pages/customer-portal/customer-portal.controller';
import { CustomerPortalLinks } from './pages/customer-portal/customer-portal-links';
import { DeveloperPortalController } from './pages/developer-portal/developer-portal.controller';
import { PortalUsersService } from './pages/developer-portal/portal-users.service';
import { PAGES_LOGGER } from './pages/pages-logger';
import { ApiController } from './routing/api.controller';
import { RoutePolicyMiddleware } from './routing/route-policy.middleware';
import { RouteRunner } from './routing/route-runner';

/**
 * The `/v1` pipeline, in order: metrics → authenticate (401) → route table and key
 * policy (404/405/403) → idempotency (replay/409) → ApiController: validation (400),
 * the route's handler or 501 → gRPC call → one error filter.
 */
@Module({})
export class GatewayModule implements NestModule {
  static forConfig(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [ApiController, OperatorController, HealthController, OpenApiController, DeveloperPortalController, CustomerPortalController, CheckoutController, PayerPagesController, InvoicePaymentController, ProviderCallbacksController],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: CLOCK, useValue: systemClock },
        { provide: PAGES_LOGGER, useValue: new JsonLogger('gateway') },
        { provide: PrismaService, useFactory: () => new PrismaService(config.databaseUrl) },
        ServiceClients,
        RouteRunner,
        CustomerPortalLinks,
        PortalUsersService,
        ApiKeysRepository,
        IdempotencyRepository,
        AccountsService,
        OperatorTokenGuard,
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpMetricsMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
    consumer
      .apply(AuthenticateMiddleware, RoutePolicyMiddleware, InputRulesMiddleware, IdempotencyMiddleware)
      .forRoutes({ path: 'v1/{*path}', method: RequestMethod.ALL }, { path: 'v1', method: RequestMethod.ALL });
  }
}
