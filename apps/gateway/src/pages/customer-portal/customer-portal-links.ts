import { createHmac, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, type TenantRef } from '@recur/kernel';
import { GATEWAY_CONFIG, type GatewayConfig } from '../../config';
import { PrismaService } from '../../infrastructure/prisma.service';
import { tokensMatch } from '../page-kit';

/** What a customer portal link grants: one customer of one app, until `expiresAt` (unix seconds). */
export interface PortalClaims {
  tenant: TenantRef;
  customerId: string;
  expiresAt: number;
}

/** An expired link's claims are still the signer's (its signature holds): they say whose language its page speaks. */
export type PortalLinkCheck = { status: 'valid'; claims: PortalClaims } | { status: 'invalid' } | { status: 'expired'; claims: PortalClaims };

const SIGNING_KEY_PURPOSE = 'customer_portal';
const base64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

/**
 * Customer portal links: `<CUSTOMER_PORTAL_URL>/<token>`, the token being the claims (JSON,
 * base64url) and their HMAC-SHA256. Nothing is stored per link; the key lives in the gateway's
 * database (`signing_keys`, made on first use) so every replica checks what any replica signed.
 * A link is valid for CUSTOMER_PORTAL_SESSION_TTL_SECONDS (default 1 hour) from its creation.
 */
@Injectable()
export class CustomerPortalLinks {
  private key: Promise<Buffer> | undefined;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  /** A signed link for `customerId`; the caller has checked the customer exists in `tenant`. */
  async create(tenant: TenantRef, customerId: string): Promise<{ url: string; created: number; expiresAt: number }> {
    const created = Math.floor(this.now().getTime() / 1000);
    const expiresAt = created + this.config.customerPortalSessionTtlSeconds;
    const payload = base64url(JSON.stringify({ a: tenant.accountId, l: tenant.livemode, c: customerId, e: expiresAt }));
    const token = `${payload}.${base64url(await this.sign(payload))}`;
    return { url: `${this.config.customerPortalUrl}/${token}`, created, expiresAt };
  }

  /** Signature first: a link whose claims were edited is `invalid`, never `expired`. */
  async check(token: string): Promise<PortalLinkCheck> {
    const [payload, signature, ...rest] = token.split('.');
    if (!payload || !signature || rest.length > 0) return { status: 'invalid' };
    // The signature's text is compared, not its decoded bytes: base64url's last character carries
    // bits a decoder drops, so another spelling of the same bytes would pass as the same link.
    if (!tokensMatch(base64url(await this.sign(payload)), signature)) return { status: 'invalid' };
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: string; l: boolean; c: string; e: number };
    const signed = { tenant: { accountId: claims.a, livemode: claims.l }, customerId: claims.c, expiresAt: claims.e };
    return claims.e * 1000 <= this.now().getTime() ? { status: 'expired', claims: signed } : { status: 'valid', claims: signed };
  }

  private async sign(payload: string): Promise<Buffer> {
    return createHmac('sha256', await this.signingKey()).update(payload).digest();
  }

  private signingKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  /** The first replica to need a key makes it; the others read the one that won. */
  private async loadKey(): Promise<Buffer> {
    await this.prisma.signingKey.createMany({ data: [{ purpose: SIGNING_KEY_PURPOSE, secret: randomBytes(32).toString('base64url') }], skipDuplicates: true });
    const row = await this.prisma.signingKey.findUniqueOrThrow({ where: { purpose: SIGNING_KEY_PURPOSE } });
    return Buffer.from(row.secret, 'base64url');
  }
}
