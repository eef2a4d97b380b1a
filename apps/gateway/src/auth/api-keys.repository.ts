import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infrastructure/prisma.service';
import type { Caller, KeyKind, KeyScope } from '../http/request-context';
import { hashKey, KEY_CACHE_TTL_MS } from './api-key';

/** `last_used_at` is refreshed at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys kept in memory at most; the oldest entry makes room. */
const KEY_CACHE_MAX_ENTRIES = 10_000;
/**
 * A key served from memory is read again in the background once its entry is this old, so a key
 * in steady use is always fresh and no request waits on its row; the bound stays KEY_CACHE_TTL_MS.
 */
export const KEY_REFRESH_AFTER_MS = KEY_CACHE_TTL_MS / 2;

interface CachedKey {
  caller: Caller;
  expiresAt: number | undefined;
  fetchedAt: number;
}

/**
 * Looks keys up by hash; a revoked or expired key resolves to nothing. Every `/v1` request
 * resolves its key, so resolved keys are kept in memory for at most KEY_CACHE_TTL_MS after their
 * row was read, and read again ahead of that (KEY_REFRESH_AFTER_MS) while in use; unknown keys
 * are not kept (a key created on another replica works at once). Concurrent requests of one key
 * share one read of its row: a herd of them must not each run it when its entry ages out.
 */
@Injectable()
export class ApiKeysRepository {
  private readonly cache = new Map<string, CachedKey>();
  /** Reads of a key's row under way, by hash, for requests of that key to share. */
  private readonly reads = new Map<string, Promise<CachedKey | undefined>>();
  /** Bumped by every `forget`: a read that overlapped one does not fill the cache. */
  private generation = 0;

  constructor(private readonly prisma: PrismaService) {}

  async resolve(key: string, now: Date): Promise<Caller | undefined> {
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    const age = cached ? now.getTime() - cached.fetchedAt : Infinity;
    let entry: CachedKey | undefined;
    if (cached && age < KEY_CACHE_TTL_MS) {
      if (age >= KEY_REFRESH_AFTER_MS) void this.read(hash, now).catch(() => undefined);
      entry = cached;
    } else {
      this.cache.delete(hash);
      entry = await this.read(hash, now);
    }
    return entry && (entry.expiresAt === undefined || entry.expiresAt > now.getTime()) ? entry.caller : undefined;
  }

  /** Drops a key from memory once its row changed (revoked, rolled): the next request reads the row. */
  forget(keyId: string): void {
    this.generation += 1;
    // A read under way may have seen the row before the change: later requests must not join it.
    this.reads.clear();
    for (const [hash, entry] of this.cache) if (entry.caller.keyId === keyId) this.cache.delete(hash);
  }

  /** Drops every key of the account from memory (its rate limits changed): the next request reads the row. */
  forgetAccount(accountId: string): void {
    this.generation += 1;
    this.reads.clear();
    for (const [hash, entry] of this.cache) if (entry.caller.tenant.accountId === accountId) this.cache.delete(hash);
  }

  /** The key's row, read once for every request that asks meanwhile; a usable key is cached. */
  private read(hash: string, now: Date): Promise<CachedKey | undefined> {
    const running = this.reads.get(hash);
    if (running) return running;
    const reading = this.readRow(hash, now).finally(() => {
      if (this.reads.get(hash) === reading) this.reads.delete(hash);
    });
    this.reads.set(hash, reading);
    return reading;
  }

  private async readRow(hash: string, now: Date): Promise<CachedKey | undefined> {
    const generation = this.generation;
    const row = await this.prisma.apiKey.findUnique({ where: { hash }, include: { account: { select: { name: true } }, app: { select: { rateLimitReadPerSecond: true, rateLimitWritePerSecond: true } } } });
    if (!row || (row.expiresAt && row.expiresAt <= now)) {
      this.cache.delete(hash);
      return undefined;
    }
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      void this.prisma.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: now } }).catch(() => undefined);
    }
    const entry: CachedKey = {
      caller: {
        keyId: row.id,
        tenant: { accountId: row.accountId, livemode: row.livemode },
        accountName: row.account.name,
        kind: row.kind as KeyKind,
        scope: row.scope as KeyScope,
        rateLimits: { readPerSecond: row.app.rateLimitReadPerSecond, writePerSecond: row.app.rateLimitWritePerSecond },
      },
      expiresAt: row.expiresAt?.getTime(),
      // When the read began: the entry's age, and so the revocation bound, errs on the safe side.
      fetchedAt: now.getTime(),
    };
    if (generation === this.generation) {
      this.cache.delete(hash);
      if (this.cache.size >= KEY_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(hash, entry);
    }
    return entry;
  }
}
