import { Controller, Get, Header, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { metricsRegistry } from '@recur/telemetry';
import { PrismaService } from '../infrastructure/prisma.service';

/** Liveness, readiness and Prometheus metrics, outside `/v1` and without a key. */
@Controller()
export class HealthController {
  constructor(private readonly prisma: PrismaService) {}

  @Get('healthz')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready when the gateway's own database answers; peers are not checked (no cascading failure). */
  @Get('readyz')
  async ready(): Promise<{ status: 'ready' }> {
    try {
      await this.prisma.$queryRaw`SELECT 1`;
    } catch {
      throw new ServiceUnavailableException('database unavailable');
    }
    return { status: 'ready' };
  }

  @Get('metrics')
  @Header('content-type', metricsRegistry.contentType)
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
