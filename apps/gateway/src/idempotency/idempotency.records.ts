import { newId, type TenantRef } from '@recur/kernel';
import { isUniqueViolation } from '@recur/persistence';
import type { PrismaClient } from '../generated/prisma/client';

export type Claim =
  | { outcome: 'claimed'; recordId: string }
  | { outcome: 'replay'; status: number; body: string }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

/** A request that has held its key this long without answering is presumed dead. */
export const IDEMPOTENCY_LOCK_TTL_MS = 60_000;
/** Records are kept for 24 hours, as Stripe does; after that a key may be used afresh. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The idempotency records and their rules. Time is passed in, so retention and lock
 * expiry are testable without waiting; the Nest provider is IdempotencyRepository.
 */
export class IdempotencyRecords {
  constructor(private readonly prisma: Pick<PrismaClient, 'idempotencyRecord'>) {}

  /**
   * Claims a key for a request, or tells why not. The unique (account, app, key)
   * constraint decides races between concurrent first requests.
   */
  async claim(tenant: TenantRef, key: string, fingerprint: string, now: Date): Promise<Claim> {
    const id = newId('req');
    try {
      await this.prisma.idempotencyRecord.create({
        data: { id, accountId: tenant.accountId, livemode: tenant.livemode, key, fingerprint, lockedAt: now, createdAt: now },
      });
      return { outcome: 'claimed', recordId: id };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const record = await this.prisma.idempotencyRecord.findUnique({
      where: { accountId_livemode_key: { accountId: tenant.accountId, livemode: tenant.livemode, key } },
    });
    if (!record) return this.claim(tenant, key, fingerprint, now); // expired and purged meanwhile
    if (record.createdAt.getTime() < now.getTime() - IDEMPOTENCY_RETENTION_MS) {
      await this.prisma.idempotencyRecord.deleteMany({ where: { id: record.id } });
      return this.claim(tenant, key, fingerprint, now);
    }
    if (record.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (record.status !== null && record.responseBody !== null) return { outcome: 'replay', status: record.status, body: record.responseBody };
    // Still running, or its process died: take over a lock older than the TTL.
    const stale = new Date(now.getTime() - IDEMPOTENCY_LOCK_TTL_MS);
    const takeover = await this.prisma.idempotencyRecord.updateMany({
      where: { id: record.id, status: null, OR: [{ lockedAt: null }, { lockedAt: { lt: stale } }] },
      data: { lockedAt: now },
    });
    return takeover.count === 1 ? { outcome: 'claimed', recordId: record.id } : { outcome: 'in_progress' };
  }

  async complete(recordId: string, status: number, body: string): Promise<void> {
    await this.prisma.idempotencyRecord.update({ where: { id: recordId }, data: { status, responseBody: body, lockedAt: null } });
  }

  /**
   * A server-side failure is not remembered as the answer: the lock is lifted so the
   * client's retry runs the request again. The record itself stays, so the retry takes
   * over the same record id and the service sees the same request id: work the failed
   * attempt already committed (a customer created before its answer was lost) is
   * answered again instead of being done twice.
   */
  async release(recordId: string): Promise<void> {
    await this.prisma.idempotencyRecord.updateMany({ where: { id: recordId, status: null }, data: { lockedAt: null } });
  }

  /**
   * A request refused as invalid (400) changed nothing, so nothing is kept under its key
   * (as Stripe saves no result for requests that fail validation): the corrected request
   * may reuse the key.
   */
  async forget(recordId: string): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { id: recordId, status: null } });
  }

  async purgeExpired(now: Date): Promise<number> {
    const { count } = await this.prisma.idempotencyRecord.deleteMany({
      where: { createdAt: { lt: new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS) } },
    });
    return count;
  }
}
