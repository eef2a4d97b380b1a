import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Caller, KeyKind, KeyScope } from '../http/request-context';
import { hashKey } from './api-key';

/** `last_used_at` is refreshed at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Looks keys up by hash; a revoked or expired key resolves to nothing. */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  async resolve(key: string, now: Date): Promise<Caller | undefined> {
    const row = await this.prisma.apiKey.findUnique({ where: { hash: hashKey(key) }, include: { account: { select: { name: true } } } });
    if (!row || (row.expiresAt && row.expiresAt <= now)) return undefined;
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      void this.prisma.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: now } }).catch(() => undefined);
    }
    return {
      keyId: row.id,
      tenant: { accountId: row.accountId, livemode: row.livemode },
      accountName: row.account.name,
      kind: row.kind as KeyKind,
      scope: row.scope as KeyScope,
    };
  }
}
