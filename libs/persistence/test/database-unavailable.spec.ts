import { createServer, type Server, type Socket } from 'node:net';
import { DomainError } from '@recur/kernel';
import { createTestDatabase, rejectionOf } from '@recur/testing';
import { Pool } from 'pg';
import { isDatabaseUnavailable, survivingConnectionLoss } from '../src';

jest.setTimeout(30_000);

let databaseUrl: string;
let admin: Pool;

beforeAll(async () => {
  databaseUrl = await createTestDatabase('unavailable');
  admin = new Pool({ connectionString: databaseUrl, max: 1 });
});
afterAll(() => admin.end());

/** A URL of the same database whose server is at a TCP port of ours. */
function urlAt(port: number): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  url.searchParams.delete('host');
  return url.toString();
}

/** A TCP server that accepts and never answers: a PostgreSQL that hangs, or a network that drops every byte. */
async function silentServer(): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

it('a query whose connection the server terminates (a restart, a failover: 57P01) is the database unavailable', async () => {
  const pool = survivingConnectionLoss(new Pool({ connectionString: databaseUrl, max: 1 }));
  try {
    const sleeping = rejectionOf(pool.query("SELECT pg_sleep(10), 'unavailable-spec'"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%unavailable-spec%' AND pid <> pg_backend_pid()");
    const error = await sleeping;
    expect(isDatabaseUnavailable(error)).toBe(true);
  } finally {
    await pool.end();
  }
});

it('a server that refuses connections, and one that never answers the handshake, are the database unavailable', async () => {
  const { server, port, sockets } = await silentServer();
  const hanging = new Pool({ connectionString: urlAt(port), connectionTimeoutMillis: 200 });
  try {
    const timedOut = await rejectionOf(hanging.query('SELECT 1'));
    expect({ message: (timedOut as Error).message, unavailable: isDatabaseUnavailable(timedOut) }).toEqual({ message: expect.stringMatching(/timeout/i), unavailable: true });
  } finally {
    await hanging.end();
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  }
  // The port is closed now: nothing listens there.
  const refusing = new Pool({ connectionString: urlAt(port) });
  try {
    const refused = await rejectionOf(refusing.query('SELECT 1'));
    expect({ code: (refused as { code?: string }).code, unavailable: isDatabaseUnavailable(refused) }).toEqual({ code: 'ECONNREFUSED', unavailable: true });
  } finally {
    await refusing.end();
  }
});

it("a request's own faults (bad SQL, a violated constraint, a domain error) are not the database unavailable", async () => {
  await admin.query('CREATE TABLE IF NOT EXISTS unavailable_spec (id int PRIMARY KEY)');
  await admin.query('INSERT INTO unavailable_spec VALUES (1) ON CONFLICT DO NOTHING');
  const faults = [
    await rejectionOf(admin.query('SELEC 1')),
    await rejectionOf(admin.query('INSERT INTO unavailable_spec VALUES (1)')),
    await rejectionOf(admin.query('SELECT 1 / 0')),
    new DomainError('conflict', 'invoice_paid', 'The invoice is paid.'),
    Object.assign(new Error("ENOENT: no such file or directory, open 'logo.png'"), { code: 'ENOENT' }),
  ];
  expect(faults.map((fault) => isDatabaseUnavailable(fault))).toEqual([false, false, false, false, false]);
});

it('reads the codes Prisma and its driver adapter wrap around the driver error', () => {
  // The shapes @prisma/client 7 with @prisma/adapter-pg throws (seen with the server stopped and restarting).
  const wrapped = [
    Object.assign(new Error('Invalid `prisma.$queryRawUnsafe()` invocation: connect ENOENT /tmp/pg/.s.PGSQL.5432'), { code: 'ENOENT' }),
    Object.assign(new Error("Can't reach database server"), { code: 'P1001' }),
    Object.assign(new Error('Raw query failed'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57P01' } } } }),
    Object.assign(new Error('adapter'), { cause: { kind: 'DatabaseNotReachable' } }),
  ];
  expect(wrapped.map((error) => isDatabaseUnavailable(error))).toEqual([true, true, true, true]);
});
