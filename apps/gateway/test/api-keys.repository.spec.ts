import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase, queryDatabase } from '@recur/testing';
import type * as GeneratedClient from '../src/generated/prisma/client';
import { hashKey, KEY_CACHE_TTL_MS } from '../src/auth/api-key';
import { ApiKeysRepository, KEY_REFRESH_AFTER_MS } from '../src/auth/api-keys.repository';
import type { PrismaService } from '../src/infrastructure/prisma.service';

/**
 * The key cache on a real database, with time passed in: requests of one key share one read of
 * its row, a key in use is read again in the background before its entry ages out (no request
 * waits on it), and a revocation seen by that read takes effect at once.
 */
// The generated client's sources import with .js suffixes jest cannot resolve; its build can be loaded.
const { PrismaClient } = require('../dist/generated/prisma/client') as typeof GeneratedClient;
let prisma: GeneratedClient.PrismaClient;
let databaseUrl: string;
let keyCount = 0;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('gateway_key_reads');
  await applyMigrations({ databaseUrl, migrationsDir: join(__dirname, '..', 'prisma', 'migrations') });
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}, 60_000);

afterAll(async () => {
  await prisma?.$disconnect();
});

/** A key's row, straight in the table: its id and its secret. */
async function newKey(): Promise<{ id: string; secret: string }> {
  const n = ++keyCount;
  const secret = `recur_test_sk_${randomBytes(16).toString('hex')}`;
  await prisma.account.create({ data: { id: `acct_reads_${n}`, name: `Reads ${n}`, apps: { create: { id: `app_reads_${n}`, mode: 'sandbox', livemode: false } } } });
  await prisma.apiKey.create({
    data: { id: `key_reads_${n}`, accountId: `acct_reads_${n}`, appId: `app_reads_${n}`, livemode: false, kind: 'secret', scope: 'full', redacted: 'recur_test_sk_…', hash: hashKey(secret) },
  });
  return { id: `key_reads_${n}`, secret };
}

/** The repository over the test's client, and every read of a key row it starts. */
function observedRepository(): { keys: ApiKeysRepository; reads: Promise<unknown>[] } {
  const reads: Promise<unknown>[] = [];
  const apiKey = prisma.apiKey;
  const counted = new Proxy(apiKey, {
    get: (target, name) => (name === 'findUnique'
      ? (args: Parameters<typeof apiKey.findUnique>[0]) => {
          const read = target.findUnique(args);
          reads.push(read);
          return read;
        }
      : Reflect.get(target, name)),
  });
  return { keys: new ApiKeysRepository({ apiKey: counted } as unknown as PrismaService), reads };
}

describe('API key reads', () => {
  it('share one read of the row among fifty concurrent requests of a key not in memory', async () => {
    const key = await newKey();
    const { keys, reads } = observedRepository();
    const now = new Date();
    const callers = await Promise.all(Array.from({ length: 50 }, () => keys.resolve(key.secret, now)));
    expect(reads).toHaveLength(1);
    expect(new Set(callers.map((caller) => caller?.keyId))).toEqual(new Set([key.id]));
  });

  it('serve a key from memory past the refresh age while one background read renews it, and a revocation it sees refuses the key at once', async () => {
    const key = await newKey();
    const { keys, reads } = observedRepository();
    const t0 = Date.now();
    expect((await keys.resolve(key.secret, new Date(t0)))?.keyId).toBe(key.id);
    expect(await keys.resolve(key.secret, new Date(t0 + KEY_REFRESH_AFTER_MS - 1))).toBeDefined();
    expect(reads).toHaveLength(1);

    await queryDatabase(databaseUrl, 'UPDATE api_keys SET expires_at = now() WHERE id = $1', [key.id]);
    // Past the refresh age: answered from memory, without waiting; three requests start one read.
    const aged = new Date(t0 + KEY_REFRESH_AFTER_MS + 1);
    const answers = await Promise.all([keys.resolve(key.secret, aged), keys.resolve(key.secret, aged), keys.resolve(key.secret, aged)]);
    expect(answers.map((caller) => caller?.keyId)).toEqual([key.id, key.id, key.id]);
    expect(reads).toHaveLength(2);
    await reads[1];
    // The read saw the revocation: refused now, well before KEY_CACHE_TTL_MS.
    expect(await keys.resolve(key.secret, new Date(t0 + KEY_REFRESH_AFTER_MS + 2))).toBeUndefined();
  });

  it('read the row again, on the request path, once an entry is KEY_CACHE_TTL_MS old', async () => {
    const key = await newKey();
    const { keys, reads } = observedRepository();
    const t0 = Date.now();
    await keys.resolve(key.secret, new Date(t0));
    await queryDatabase(databaseUrl, 'UPDATE api_keys SET expires_at = now() WHERE id = $1', [key.id]);
    expect(await keys.resolve(key.secret, new Date(t0 + KEY_CACHE_TTL_MS))).toBeUndefined();
    expect(reads).toHaveLength(2);
  });

  it('do not let a request after `forget` join a read that began before it', async () => {
    const key = await newKey();
    const { keys, reads } = observedRepository();
    const now = new Date();
    const before = keys.resolve(key.secret, now);
    keys.forget(key.id);
    const after = keys.resolve(key.secret, now);
    await Promise.all([before, after]);
    expect(reads).toHaveLength(2);
  });
});
