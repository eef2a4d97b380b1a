import { type DynamicModule, Module } from '@nestjs/common';
import { CLOCK, systemClock } from '@recur/kernel';
import { JsonLogger } from '@recur/telemetry';
import { AccountsService } from './accounts/accounts.service';
import { OperatorController } from './accounts/operator.controller';
import { OperatorTokenGuard } from './accounts/operator-token.guard';
import { ApiKeysRepository } from './auth/api-keys.repository';
import { GATEWAY_CONFIG, type GatewayConfig } from './config';
import { HealthController } from './health/health.controller';
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
import { RouteRunner } from './routing/route-runner';
import { RateLimiter } from './rate-limits/rate-limiter';
import { AppRateLimits } from './rate-limits/app-rate-limits.service';

/**
 * The gateway's services and its page, operator, health and OpenAPI controllers. The `/v1` API is
 * not a Nest controller: it is one native Fastify route with its pipeline as hooks
 * (routing/api-route.ts, registered in app.ts with services from this module).
 */
@Module({})
export class GatewayModule {
  static forConfig(config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [OperatorController, HealthController, OpenApiController, DeveloperPortalController, CustomerPortalController, CheckoutController, PayerPagesController, InvoicePaymentController, ProviderCallbacksController],
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
        RateLimiter,
        AppRateLimits,
        IdempotencyRepository,
        AccountsService,
        OperatorTokenGuard,
      ],
    };
  }
}
