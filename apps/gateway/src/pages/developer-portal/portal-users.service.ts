import { hash, verify } from '@node-rs/argon2';
import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, DomainError, invalidArgument, newId, notFound, randomBase62 } from '@recur/kernel';
import { CUSTOMER_EMAIL_MAX, EMAIL_PATTERN } from '@recur/vocabulary';
import { PrismaService } from '../../infrastructure/prisma.service';
import { randomToken, sha256Hex } from '../page-kit';

/** A developer portal session lasts at most this long from sign-in; sign-out ends it at once. */
export const PORTAL_SESSION_TTL_MS = 8 * 3600 * 1000;
/** A session unused this long ends (sliding: every request moves it), whatever its absolute expiry. */
export const PORTAL_SESSION_IDLE_MS = 30 * 60 * 1000;
/** Last-seen is written at most this often, so browsing is not one write per page. */
const LAST_SEEN_GRANULARITY_MS = 60 * 1000;
export const PASSWORD_MIN_LENGTH = 12;

export interface PortalUserView {
  id: string;
  object: 'portal_user';
  account: string;
  email: string;
  created: number;
  /** Only in the answer that created the user, when the password was generated. */
  password?: string;
}

/** A signed-in browser, as each portal request sees it. */
export interface PortalSessionView {
  sessionId: string;
  userEmail: string;
  accountId: string;
  accountName: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Verifying an unknown address costs as much as a known one, so timing tells nothing. */
const UNKNOWN_USER_HASH = hash(randomBase62(24));

/**
 * Developer portal users and their sessions. Passwords are hashed with argon2id
 * (@node-rs/argon2's defaults: 19 MiB, 2 passes — OWASP's minimum); a session is a random
 * cookie token whose SHA-256 is the row's key, so a read of the table signs no one in.
 */
@Injectable()
export class PortalUsersService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async createUser(accountId: string, email: string, password?: string): Promise<PortalUserView> {
    const address = email.trim().toLowerCase();
    if (!EMAIL_PATTERN.test(address) || address.length > CUSTOMER_EMAIL_MAX) throw invalidArgument('email', 'email must be a valid e-mail address');
    if (password !== undefined && password.length < PASSWORD_MIN_LENGTH) {
      throw invalidArgument('password', `password must be at least ${PASSWORD_MIN_LENGTH} characters`);
    }
    const account = await this.prisma.account.findUnique({ where: { id: accountId } });
    if (!account) throw notFound('account', accountId);
    if (await this.prisma.portalUser.findUnique({ where: { email: address } })) {
      throw new DomainError('already_exists', 'user_exists', `A portal user with e-mail ${address} exists.`, 'email');
    }
    const chosen = password ?? randomBase62(20);
    const row = await this.prisma.portalUser.create({
      data: { id: newId('usr'), accountId, email: address, passwordHash: await hash(chosen) },
    });
    return {
      id: row.id,
      object: 'portal_user',
      account: row.accountId,
      email: row.email,
      created: Math.floor(row.createdAt.getTime() / 1000),
      ...(password === undefined ? { password: chosen } : {}),
    };
  }

  /** A new session's cookie token, or undefined for a wrong address or password. */
  async signIn(email: string, password: string): Promise<string | undefined> {
    const user = await this.prisma.portalUser.findUnique({ where: { email: email.trim().toLowerCase() } });
    const matches = await verify(user?.passwordHash ?? (await UNKNOWN_USER_HASH), password).catch(() => false);
    if (!user || !matches) return undefined;
    const token = randomToken();
    await this.prisma.portalSession.create({
      data: {
        id: newId('sess'),
        userId: user.id,
        tokenHash: sha256Hex(token),
        csrfToken: randomToken(),
        expiresAt: new Date(this.now().getTime() + PORTAL_SESSION_TTL_MS),
        lastSeenAt: this.now(),
      },
    });
    // Expired and idle sessions of anyone are swept at each sign-in; they never sign anyone in meanwhile.
    await this.prisma.portalSession.deleteMany({
      where: { OR: [{ expiresAt: { lte: this.now() } }, { lastSeenAt: { lte: new Date(this.now().getTime() - PORTAL_SESSION_IDLE_MS) } }] },
    });
    return token;
  }

  async session(token: string | undefined): Promise<PortalSessionView | undefined> {
    if (!token) return undefined;
    const row = await this.prisma.portalSession.findUnique({ where: { tokenHash: sha256Hex(token) }, include: { user: { include: { account: true } } } });
    const now = this.now();
    if (!row || row.expiresAt <= now) return undefined;
    if (now.getTime() - row.lastSeenAt.getTime() >= PORTAL_SESSION_IDLE_MS) {
      await this.prisma.portalSession.deleteMany({ where: { id: row.id } });
      return undefined;
    }
    if (now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_GRANULARITY_MS) {
      await this.prisma.portalSession.updateMany({ where: { id: row.id }, data: { lastSeenAt: now } });
    }
    return {
      sessionId: row.id,
      userEmail: row.user.email,
      accountId: row.user.accountId,
      accountName: row.user.account.name,
      csrfToken: row.csrfToken,
      expiresAt: row.expiresAt,
    };
  }

  async signOut(sessionId: string): Promise<void> {
    await this.prisma.portalSession.deleteMany({ where: { id: sessionId } });
  }
}
