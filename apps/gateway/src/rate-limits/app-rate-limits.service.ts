import { Inject, Injectable } from '@nestjs/common';
import { invalidArgument, notFound } from '@recur/kernel';
import type { AppMode } from '../auth/api-key';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import { GATEWAY_CONFIG, type GatewayConfig, RATE_LIMIT_MAX_PER_SECOND } from '../config';
import { PrismaService } from '../infrastructure/prisma.service';

/** An app's rate limits as the operator sees them: in force, its own (null: none), and the mode's default. */
export interface RateLimitsView {
  object: 'rate_limits';
  account: string;
  app: AppMode;
  read_per_second: number;
  write_per_second: number;
  own: { read_per_second: number | null; write_per_second: number | null };
  default_per_second: number;
}

export interface RateLimitsChange {
  app: AppMode;
  /** A number sets the app's own limit; null returns to the default; absent leaves it. */
  read_per_second?: number | null;
  write_per_second?: number | null;
}

/** Each app's own per-key rate limits (the operator's setting); without one, the gateway's default for the mode applies. */
@Injectable()
export class AppRateLimits {
  constructor(
    private readonly prisma: PrismaService,
    private readonly keys: ApiKeysRepository,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async list(accountId: string): Promise<RateLimitsView[]> {
    const apps = await this.prisma.app.findMany({ where: { accountId }, orderBy: { livemode: 'asc' } });
    if (apps.length === 0) throw notFound('account', accountId);
    return apps.map((app) => this.view(app));
  }

  async set(accountId: string, change: RateLimitsChange): Promise<RateLimitsView> {
    for (const param of ['read_per_second', 'write_per_second'] as const) {
      const value = change[param];
      if (value !== undefined && value !== null && (!Number.isInteger(value) || value < 1 || value > RATE_LIMIT_MAX_PER_SECOND)) {
        throw invalidArgument(param, `${param} must be an integer from 1 to ${RATE_LIMIT_MAX_PER_SECOND}, or null for the default`);
      }
    }
    const app = await this.prisma.app.findUnique({ where: { accountId_mode: { accountId, mode: change.app } } });
    if (!app) throw notFound('account', accountId);
    const updated = await this.prisma.app.update({
      where: { id: app.id },
      data: {
        ...(change.read_per_second === undefined ? {} : { rateLimitReadPerSecond: change.read_per_second }),
        ...(change.write_per_second === undefined ? {} : { rateLimitWritePerSecond: change.write_per_second }),
      },
    });
    // This gateway applies it from the next request; the others as they read the keys again (KEY_CACHE_TTL_MS).
    this.keys.forgetAccount(accountId);
    return this.view(updated);
  }

  private view(app: { accountId: string; mode: string; livemode: boolean; rateLimitReadPerSecond: number | null; rateLimitWritePerSecond: number | null }): RateLimitsView {
    const fallback = app.livemode ? this.config.rateLimits.livePerSecond : this.config.rateLimits.sandboxPerSecond;
    return {
      object: 'rate_limits',
      account: app.accountId,
      app: app.mode as AppMode,
      read_per_second: app.rateLimitReadPerSecond ?? fallback,
      write_per_second: app.rateLimitWritePerSecond ?? fallback,
      own: { read_per_second: app.rateLimitReadPerSecond, write_per_second: app.rateLimitWritePerSecond },
      default_per_second: fallback,
    };
  }
}
