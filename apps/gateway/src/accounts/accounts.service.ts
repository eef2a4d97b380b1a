import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, DomainError, invalidArgument, newId, notFound } from '@recur/kernel';
import { PrismaService } from '../infrastructure/prisma.service';
import { ApiKeysRepository } from '../auth/api-keys.repository';
import { type AppMode, generateKey, hashKey, keyFitsApp, kindOf, type KeyType, redactKey } from '../auth/api-key';
import type { KeyScope } from '../http/request-context';

export interface AccountView {
  id: string;
  object: 'account';
  name: string;
  created: number;
  apps: { id: string; mode: AppMode; livemode: boolean }[];
}

export interface ApiKeyView {
  id: string;
  object: 'api_key';
  account: string;
  app: AppMode;
  type: KeyType;
  scope: KeyScope;
  name: string | null;
  redacted: string;
  created: number;
  expires_at: number | null;
  last_used_at: number | null;
  /** The whole key: present only in the answer that creates it. */
  secret?: string;
}

type KeyRow = Awaited<ReturnType<PrismaService['apiKey']['findFirstOrThrow']>>;
const seconds = (date: Date | null) => (date ? Math.floor(date.getTime() / 1000) : null);

function keyView(row: KeyRow & { app: { mode: string } }, secret?: string): ApiKeyView {
  const type: KeyType = row.kind === 'publishable' ? 'publishable' : row.livemode ? 'live' : 'test';
  return {
    id: row.id,
    object: 'api_key',
    account: row.accountId,
    app: row.app.mode as AppMode,
    type,
    scope: row.scope as KeyScope,
    name: row.name,
    redacted: row.redacted,
    created: seconds(row.createdAt)!,
    expires_at: seconds(row.expiresAt),
    last_used_at: seconds(row.lastUsedAt),
    ...(secret ? { secret } : {}),
  };
}

/** The operator may act on any key; a portal user only on their account's (`ownerAccountId`). */
const ownedBy = (row: { accountId: string }, ownerAccountId: string | undefined) => ownerAccountId === undefined || row.accountId === ownerAccountId;

export interface CreateKeyInput {
  app: AppMode;
  type: KeyType;
  scope?: KeyScope;
  name?: string;
}

/** Accounts, their two apps, and the keys of each app (the operator surface's use cases). */
@Injectable()
export class AccountsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly keys: ApiKeysRepository,
    @Inject(CLOCK) private readonly now: Clock,
  ) {}

  async createAccount(name: string): Promise<AccountView> {
    const accountId = newId('acct');
    const account = await this.prisma.account.create({
      data: {
        id: accountId,
        name,
        apps: { create: [{ id: newId('app'), mode: 'sandbox', livemode: false }, { id: newId('app'), mode: 'live', livemode: true }] },
      },
      include: { apps: true },
    });
    return {
      id: account.id,
      object: 'account',
      name: account.name,
      created: seconds(account.createdAt)!,
      apps: account.apps.map((app) => ({ id: app.id, mode: app.mode as AppMode, livemode: app.livemode })),
    };
  }

  async createKey(accountId: string, input: CreateKeyInput): Promise<ApiKeyView> {
    if (!keyFitsApp(input.type, input.app)) {
      throw new DomainError(
        'invalid_argument',
        'key_mode_mismatch',
        input.type === 'live' ? 'A live key can be created only on the live app.' : 'A test key can be created only on the sandbox app.',
        'type',
      );
    }
    const app = await this.prisma.app.findUnique({ where: { accountId_mode: { accountId, mode: input.app } } });
    if (!app) throw notFound('account', accountId);
    const secret = generateKey(input.type);
    const row = await this.prisma.apiKey.create({
      data: {
        id: newId('key'),
        accountId,
        appId: app.id,
        livemode: app.livemode,
        kind: kindOf(input.type),
        scope: input.scope ?? 'full',
        name: input.name ?? null,
        redacted: redactKey(secret),
        hash: hashKey(secret),
      },
      include: { app: true },
    });
    return keyView(row, secret);
  }

  async listKeys(accountId: string): Promise<ApiKeyView[]> {
    const rows = await this.prisma.apiKey.findMany({ where: { accountId }, include: { app: true }, orderBy: { createdAt: 'asc' } });
    return rows.map((row) => keyView(row));
  }

  /**
   * Replaces a key with a new one of the same app, type and scope. The old key stops
   * working now, or after `expiresInSeconds` (up to 7 days) so deployments can switch over.
   */
  async rollKey(keyId: string, expiresInSeconds = 0, ownerAccountId?: string): Promise<ApiKeyView> {
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 0 || expiresInSeconds > 7 * 24 * 3600) {
      throw invalidArgument('expires_in_seconds', 'expires_in_seconds must be an integer from 0 to 604800');
    }
    const replacement = await this.prisma.$transaction(async (tx) => {
      const old = await tx.apiKey.findUnique({ where: { id: keyId }, include: { app: true } });
      if (!old || (old.expiresAt && old.expiresAt <= this.now()) || !ownedBy(old, ownerAccountId)) throw notFound('api key', keyId);
      const type: KeyType = old.kind === 'publishable' ? 'publishable' : old.livemode ? 'live' : 'test';
      const secret = generateKey(type);
      const replacement = await tx.apiKey.create({
        data: {
          id: newId('key'),
          accountId: old.accountId,
          appId: old.appId,
          livemode: old.livemode,
          kind: old.kind,
          scope: old.scope,
          name: old.name,
          redacted: redactKey(secret),
          hash: hashKey(secret),
        },
        include: { app: true },
      });
      await tx.apiKey.update({ where: { id: old.id }, data: { rolledTo: replacement.id, expiresAt: new Date(this.now().getTime() + expiresInSeconds * 1000) } });
      return keyView(replacement, secret);
    });
    // Committed: this gateway stops serving the old key from memory now (others within KEY_CACHE_TTL_MS).
    this.keys.forget(keyId);
    return replacement;
  }

  async revokeKey(keyId: string, ownerAccountId?: string): Promise<ApiKeyView> {
    const row = await this.prisma.apiKey.findUnique({ where: { id: keyId } });
    if (!row || !ownedBy(row, ownerAccountId)) throw notFound('api key', keyId);
    const revoked = await this.prisma.apiKey.update({ where: { id: keyId }, data: { expiresAt: this.now() }, include: { app: true } });
    this.keys.forget(keyId);
    return keyView(revoked);
  }

  /** The account's name and its customer portal setting. */
  async getAccount(accountId: string): Promise<{ name: string; portalAllowsCancellation: boolean }> {
    const account = await this.prisma.account.findUnique({ where: { id: accountId } });
    if (!account) throw notFound('account', accountId);
    return { name: account.name, portalAllowsCancellation: account.portalAllowsCancellation };
  }

  /** Whether customers may cancel at period end in the customer portal (off until the account turns it on). */
  async setPortalAllowsCancellation(accountId: string, allowed: boolean): Promise<void> {
    await this.prisma.account.update({ where: { id: accountId }, data: { portalAllowsCancellation: allowed } });
  }
}
