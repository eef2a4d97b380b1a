import { join } from 'node:path';
import { applyMigrations } from '@recur/persistence';
import { createTestDatabase, queryDatabase } from '@recur/testing';
import type { GatewayConfig } from '../src/config';
import { PrismaService } from '../src/infrastructure/prisma.service';
import { CustomerPortalLinks } from '../src/pages/customer-portal/customer-portal-links';
import { PORTAL_SESSION_IDLE_MS, PORTAL_SESSION_TTL_MS, PortalUsersService } from '../src/pages/developer-portal/portal-users.service';

/**
 * The portals' credentials on a real database with a clock the test moves: customer portal
 * links (signed, expiring, refused when edited or signed by another key) and developer portal
 * users and sessions (argon2id hashes, sessions that expire and end at sign-out).
 */
let databaseUrl: string;
let prisma: PrismaService;
let now = new Date('2026-11-26T10:00:00Z');
const clock = () => now;
const config = { customerPortalUrl: 'https://billing.example/customer-portal', customerPortalSessionTtlSeconds: 600 } as GatewayConfig;
const tenant = { accountId: 'acct_links', livemode: false };

beforeAll(async () => {
  databaseUrl = await createTestDatabase('gateway_portals');
  await applyMigrations({ databaseUrl, migrationsDir: join(__dirname, '..', 'prisma', 'migrations') });
  prisma = new PrismaService(databaseUrl);
  await prisma.account.create({ data: { id: 'acct_portal', name: 'Portal Co' } });
}, 60_000);

afterAll(() => prisma?.$disconnect());

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('customer portal links', () => {
  it('grants the customer until the lifetime ends, then answers expired, with the claims its page speaks to', async () => {
    now = new Date('2026-11-26T10:00:00Z');
    const links = new CustomerPortalLinks(prisma, config, clock);
    const link = await links.create(tenant, 'cus_1');
    expect(link.url.startsWith('https://billing.example/customer-portal/')).toBe(true);
    expect(link.expiresAt - link.created).toBe(600);
    expect(await links.check(tokenOf(link.url))).toEqual({ status: 'valid', claims: { tenant, customerId: 'cus_1', expiresAt: link.expiresAt } });
    now = new Date(now.getTime() + 599_000);
    expect((await links.check(tokenOf(link.url))).status).toBe('valid');
    now = new Date(now.getTime() + 1_000);
    expect(await links.check(tokenOf(link.url))).toEqual({ status: 'expired', claims: { tenant, customerId: 'cus_1', expiresAt: link.expiresAt } });
  });

  it('refuses an edited claim, a cut token and another key as invalid, never as expired', async () => {
    now = new Date('2026-11-26T10:00:00Z');
    const links = new CustomerPortalLinks(prisma, config, clock);
    const [payload, signature] = tokenOf((await links.create(tenant, 'cus_1')).url).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const edited = (changes: object) => `${Buffer.from(JSON.stringify({ ...claims, ...changes })).toString('base64url')}.${signature}`;
    expect(await links.check(edited({ c: 'cus_2' }))).toEqual({ status: 'invalid' });
    expect(await links.check(edited({ l: true }))).toEqual({ status: 'invalid' });
    expect(await links.check(edited({ e: 1 }))).toEqual({ status: 'invalid' });
    expect(await links.check(payload)).toEqual({ status: 'invalid' });
    expect(await links.check(`${payload}.${signature}.x`)).toEqual({ status: 'invalid' });
    // Another spelling of the same signature bytes: a 32-byte HMAC's 43rd base64url character
    // carries 2 bits a decoder drops, so flipping its lowest bit decodes to the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = signature.slice(0, -1) + alphabet[alphabet.indexOf(signature.slice(-1)) ^ 1];
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    expect(await links.check(`${payload}.${respelled}`)).toEqual({ status: 'invalid' });

    // Every replica signs with the one key in the database; a different key's links do not pass.
    const replica = new CustomerPortalLinks(prisma, config, clock);
    expect((await replica.check(`${payload}.${signature}`)).status).toBe('valid');
    await prisma.signingKey.update({ where: { purpose: 'customer_portal' }, data: { secret: Buffer.alloc(32, 7).toString('base64url') } });
    expect(await new CustomerPortalLinks(prisma, config, clock).check(`${payload}.${signature}`)).toEqual({ status: 'invalid' });
  });
});

describe('developer portal users and sessions', () => {
  const users = () => new PortalUsersService(prisma, clock);

  it('stores only an argon2id hash and signs in with the right password only', async () => {
    const user = await users().createUser('acct_portal', ' Dev@Portal.Example ', 'a long enough password');
    expect(user).toMatchObject({ email: 'dev@portal.example', account: 'acct_portal' });
    expect(user).not.toHaveProperty('password');
    const [row] = await queryDatabase<{ password_hash: string }>(databaseUrl, 'SELECT password_hash FROM portal_users WHERE id = $1', [user.id]);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.password_hash).not.toContain('a long enough password');

    expect(await users().signIn('dev@portal.example', 'a wrong password!')).toBeUndefined();
    expect(await users().signIn('nobody@portal.example', 'a long enough password')).toBeUndefined();
    expect(await users().signIn('DEV@portal.example', 'a long enough password')).toEqual(expect.any(String));
  });

  it('refuses short passwords and a second user with the same address; generates a password when none is given', async () => {
    await expect(users().createUser('acct_portal', 'short@portal.example', 'too short')).rejects.toMatchObject({ code: 'parameter_invalid', param: 'password' });
    await expect(users().createUser('acct_portal', 'dev@portal.example', 'another long password')).rejects.toMatchObject({ code: 'user_exists' });
    const generated = await users().createUser('acct_portal', 'generated@portal.example');
    expect(generated.password).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(await users().signIn('generated@portal.example', generated.password!)).toEqual(expect.any(String));
  });

  it('keeps a session for its lifetime only, and sign-out ends it', async () => {
    now = new Date('2026-11-26T10:00:00Z');
    const token = (await users().signIn('dev@portal.example', 'a long enough password'))!;
    const session = (await users().session(token))!;
    expect(session).toMatchObject({ userEmail: 'dev@portal.example', accountId: 'acct_portal', accountName: 'Portal Co' });
    expect(session.csrfToken).toHaveLength(43);
    // The cookie's token is not in the table, only its hash.
    expect(await queryDatabase(databaseUrl, 'SELECT 1 FROM portal_sessions WHERE token_hash = $1', [token])).toHaveLength(0);

    // Used every 25 minutes, it lasts to the end of its lifetime and not a millisecond more.
    const end = now.getTime() + PORTAL_SESSION_TTL_MS;
    while (now.getTime() + 25 * 60_000 < end) {
      now = new Date(now.getTime() + 25 * 60_000);
      expect(await users().session(token)).toBeDefined();
    }
    now = new Date(end - 1);
    expect(await users().session(token)).toBeDefined();
    now = new Date(end);
    expect(await users().session(token)).toBeUndefined();

    now = new Date('2026-11-26T12:00:00Z');
    const second = (await users().signIn('dev@portal.example', 'a long enough password'))!;
    await users().signOut((await users().session(second))!.sessionId);
    expect(await users().session(second)).toBeUndefined();
    expect(await users().session(undefined)).toBeUndefined();
  });

  it('ends a session 30 minutes after its last request, each request moving the deadline', async () => {
    now = new Date('2026-11-26T14:00:00Z');
    const token = (await users().signIn('dev@portal.example', 'a long enough password'))!;
    now = new Date(now.getTime() + PORTAL_SESSION_IDLE_MS - 1);
    expect(await users().session(token)).toBeDefined();
    // That request counts: another idle stretch just short of the timeout still finds it.
    now = new Date(now.getTime() + PORTAL_SESSION_IDLE_MS - 1);
    expect(await users().session(token)).toBeDefined();
    now = new Date(now.getTime() + PORTAL_SESSION_IDLE_MS);
    expect(await users().session(token)).toBeUndefined();
    // The idle session's row is gone: going back in time does not revive it.
    now = new Date('2026-11-26T14:00:01Z');
    expect(await users().session(token)).toBeUndefined();
    expect(await queryDatabase(databaseUrl, 'SELECT 1 FROM portal_sessions WHERE token_hash = encode(sha256($1::bytea), \'hex\')', [token])).toHaveLength(0);
  });
});
