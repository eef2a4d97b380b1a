import { join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase } from '@recur/testing';
import type * as GeneratedClient from '../src/generated/prisma/client';
import { IDEMPOTENCY_LOCK_TTL_MS, IDEMPOTENCY_RETENTION_MS, IdempotencyRecords } from '../src/idempotency/idempotency.records';

/**
 * The idempotency records on a real PostgreSQL database, with time passed in, so the
 * 24-hour retention and the lock TTL are shown without waiting.
 */
const HOUR_MS = 3_600_000;
// The generated client's sources import with .js suffixes jest cannot resolve; its build can be loaded.
const { PrismaClient } = require('../dist/generated/prisma/client') as typeof GeneratedClient;
let prisma: GeneratedClient.PrismaClient;
let records: IdempotencyRecords;
let tenantCount = 0;
/** Each test its own tenant, so records of one test never meet another's. */
const newTenant = () => ({ accountId: `acct_idem_${++tenantCount}_${Date.now()}`, livemode: false });

beforeAll(async () => {
  const databaseUrl = await createTestDatabase('gateway_idempotency');
  await applyMigrations({ databaseUrl, migrationsDir: join(__dirname, '..', 'prisma', 'migrations') });
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  records = new IdempotencyRecords(prisma);
}, 60_000);

afterAll(async () => {
  await prisma?.$disconnect();
});

describe('idempotency records', () => {
  it('replay a stored answer, refuse another body, and refuse a repeat while the first still runs', async () => {
    const tenant = newTenant();
    const now = new Date();
    const first = await records.claim(tenant, 'key-1', 'body-a', now);
    expect(first).toEqual({ outcome: 'claimed', recordId: expect.stringMatching(/^req_/) });
    expect(await records.claim(tenant, 'key-1', 'body-a', now)).toEqual({ outcome: 'in_progress' });
    expect(await records.claim(tenant, 'key-1', 'body-b', now)).toEqual({ outcome: 'mismatch' });
    await records.complete((first as { recordId: string }).recordId, 201, '{"id":"cus_1"}');
    expect(await records.claim(tenant, 'key-1', 'body-a', now)).toEqual({ outcome: 'replay', status: 201, body: '{"id":"cus_1"}' });
    // Keys are per app: the same key in the live app is a new request.
    expect(await records.claim({ ...tenant, livemode: true }, 'key-1', 'body-a', now)).toMatchObject({ outcome: 'claimed' });
  });

  it('after a 5xx, let the retry run again under the same record id (the request id the service sees)', async () => {
    const tenant = newTenant();
    const now = new Date();
    const first = await records.claim(tenant, 'key-5xx', 'body', now);
    if (first.outcome !== 'claimed') throw new Error(`expected a claim, got ${first.outcome}`);
    await records.release(first.recordId);
    const retry = await records.claim(tenant, 'key-5xx', 'body', new Date(now.getTime() + 1_000));
    expect(retry).toEqual({ outcome: 'claimed', recordId: first.recordId });
    // The retry holds the key again: a concurrent repeat waits for it.
    expect(await records.claim(tenant, 'key-5xx', 'body', new Date(now.getTime() + 2_000))).toEqual({ outcome: 'in_progress' });
    // Nothing of the 5xx was stored as the answer.
    const stored = await prisma.idempotencyRecord.findUniqueOrThrow({ where: { id: first.recordId } });
    expect({ status: stored.status, responseBody: stored.responseBody }).toEqual({ status: null, responseBody: null });
  });

  it('let a request take over a key whose holder died, once its lock is older than the TTL', async () => {
    const tenant = newTenant();
    const start = new Date();
    const first = await records.claim(tenant, 'key-dead', 'body', start);
    expect(await records.claim(tenant, 'key-dead', 'body', new Date(start.getTime() + IDEMPOTENCY_LOCK_TTL_MS - 1_000))).toEqual({ outcome: 'in_progress' });
    expect(await records.claim(tenant, 'key-dead', 'body', new Date(start.getTime() + IDEMPOTENCY_LOCK_TTL_MS + 1_000))).toEqual(first);
  });

  it('keep records 24 hours: the purge removes only older ones, and an expired key may be used afresh', async () => {
    expect(IDEMPOTENCY_RETENTION_MS).toBe(24 * HOUR_MS);
    const tenant = newTenant();
    const createdAt = new Date('2026-03-01T12:00:00Z');
    const old = await records.claim(tenant, 'key-old', 'body-a', createdAt);
    if (old.outcome !== 'claimed') throw new Error(`expected a claim, got ${old.outcome}`);
    await records.complete(old.recordId, 201, '{"id":"cus_old"}');
    const recent = await records.claim(tenant, 'key-recent', 'body-a', new Date(createdAt.getTime() + 2 * HOUR_MS));
    expect(recent.outcome).toBe('claimed');
    const ids = async () => (await prisma.idempotencyRecord.findMany({ where: { accountId: tenant.accountId }, orderBy: { key: 'asc' } })).map((row) => row.key);

    // The other tests' records carry today's time, so the counts are this test's alone.
    expect(await records.purgeExpired(new Date(createdAt.getTime() + 24 * HOUR_MS - 1_000))).toBe(0);
    expect(await ids()).toEqual(['key-old', 'key-recent']);
    expect(await records.purgeExpired(new Date(createdAt.getTime() + 24 * HOUR_MS + 1_000))).toBe(1);
    expect(await ids()).toEqual(['key-recent']);

    // Without a purge in between, a key past its retention is also new again, even with another body.
    const stale = await records.claim(tenant, 'key-recent', 'body-b', new Date(createdAt.getTime() + 27 * HOUR_MS));
    expect(stale).toEqual({ outcome: 'claimed', recordId: expect.stringMatching(/^req_/) });
    expect(stale).not.toEqual(recent);
    expect(await records.claim(tenant, 'key-recent', 'body-a', new Date(createdAt.getTime() + 27 * HOUR_MS))).toEqual({ outcome: 'mismatch' });
  });
});
