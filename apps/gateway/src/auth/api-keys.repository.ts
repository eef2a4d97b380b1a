import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Caller, KeyKind, KeyScope } from '../http/request-context';
import { hashKey, KEY_CACHE_TTL_MS } from './api-key';

/** `last_used_at` is refreshed at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys kept in memory at most; the oldest entry makes room. */
const KEY_CACHE_MAX_ENTRIES = 10_000;

interface CachedKey {
  caller: Caller;
  expiresAt: number | undefined;
  fetchedAt: number;
}

/**
 * Looks keys up by hash; a revoked or expired key resolves to nothing. Every `/v1` request
 * resolves its key, so resolved keys are kept in memory for KEY_CACHE_TTL_MS; unknown keys are
 * not (a key created on another replica works at once).
 */
@Injectable()
export class ApiKeysRepository {
  private readonly cache = new Map<string, CachedKey>();
  /** Bumped by every `forget`: a lookup that overlapped one does not fill the cache. */
  private generation = 0;

  constructor(private readonly prisma: PrismaService) {}

  async resolve(key: string, now: Date): Promise<Caller | undefined> {
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    if (cached && now.getTime() - cached.fetchedAt < KEY_CACHE_TTL_MS) {
      return cached.expiresAt !== undefined && cached.expiresAt <= now.getTime() ? undefined : cached.caller;
    }
    this.cache.delete(hash);
    const generation = this.generation;
    const row = await this.prisma.apiKey.findUnique({ where: { hash }, include: { account: { select: { name: true } } } });
    if (!row || (row.expiresAt && row.expiresAt <= now)) return undefined;
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      void this.prisma.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: now } }).catch(() => undefined);
    }
    const caller: Caller = {
      keyId: row.id,
      tenant: { accountId: row.accountId, livemode: row.livemode },
      accountName: row.account.name,
      kind: row.kind as KeyKind,
      scope: row.scope as KeyScope,
    };
    if (generation === this.generation) {
      if (this.cache.size >= KEY_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(hash, { caller, expiresAt: row.expiresAt?.getTime(), fetchedAt: now.getTime() });
    }
    return caller;
  }

  /** Drops a key from memory once its row changed (revoked, rolled): the next request reads the row. */
  forget(keyId: string): void {
    this.generation += 1;
    for (const [hash, entry] of this.cache) if (entry.caller.keyId === keyId) this.cache.delete(hash);
  }
}
