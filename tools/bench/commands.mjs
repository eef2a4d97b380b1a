#!/usr/bin/env node
// The customer-create command alone, three ways, in one process on one durable PostgreSQL,
// phase by phase interleaved so a busy machine weighs on each alike:
//   prisma        CommandResults on Prisma's interactive transaction, the relay's NOTIFY inside it
//                 (how every command ran before; other services' commands still do)
//   pg, notify in CommandResults on a plain `pg` transaction, NOTIFY still inside it
//   pg            CommandResults on a plain `pg` transaction, NOTIFY after the COMMIT (the service now)
// Each writes what a `/v1` create writes (customer, two outbox rows, command_results) with the
// subscription service's own code (dist), and prints commands/s, p50/p99, and CPU per command of
// this process (Node) and of PostgreSQL. No HTTP, no gRPC: the database path only.
//
//   npm run bench:commands        # BENCH_SECONDS (5 per phase), BENCH_CONCURRENCY (16), BENCH_ROUNDS (2)
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { startEmbeddedPostgres } = require('@recur/local-infra');
const { applyMigrations, CommandResults, PgTransactions } = require('@recur/persistence');
const { appendToOutbox } = require('@recur/messaging');
const { subscriptionV1 } = require('@recur/contracts');
const subscription = (path) => require(join(ROOT, 'apps', 'subscription', 'dist', path));
const { PrismaService } = subscription('infrastructure/prisma.service.js');
const { CustomersRepository, PRODUCER } = subscription('customers/customers.repository.js');
const { createCustomer } = subscription('customers/customer.js');
const { toCustomerMessage, toCustomerRow } = subscription('customers/customer.mapper.js');
const { translateCustomerEvent } = subscription('customers/customer-events.translator.js');

const dir = mkdtempSync(join(tmpdir(), 'recur-bench-commands-'));
chmodSync(dir, 0o755);
const postgres = await startEmbeddedPostgres({ dataDir: join(dir, 'postgres'), persistent: true });
await postgres.ensureDatabase('recur_subscription');
const databaseUrl = postgres.urlFor('recur_subscription');
await applyMigrations({ databaseUrl, migrationsDir: join(ROOT, 'apps', 'subscription', 'prisma', 'migrations') });
const prisma = new PrismaService(databaseUrl);
const repository = new CustomersRepository(prisma);
const tenant = { accountId: 'acct_bench', livemode: false };
const response = subscriptionV1.CreateCustomerResponseSchema;

const viaPrisma = new CommandResults(prisma);
const viaPg = new CommandResults(new PgTransactions(prisma.pool));
/** A PgTransaction seen as Prisma's raw-SQL surface: the outbox append then notifies inside the transaction. */
const notifyingInside = (tx) => ({ $executeRawUnsafe: (sql, ...values) => tx.execute(sql, values) });

const ways = {
  prisma: (change) => viaPrisma.run(tenant, { requestId: `req_${randomBytes(9).toString('hex')}` }, response, async (tx) => {
    await tx.customer.create({ data: toCustomerRow(change.customer) });
    await appendToOutbox(tx, PRODUCER, change.events.flatMap(translateCustomerEvent));
    return { customer: toCustomerMessage(change.customer) };
  }),
  'pg, notify in': (change) => viaPg.run(tenant, { requestId: `req_${randomBytes(9).toString('hex')}` }, response, async (tx) => {
    await tx.execute(
      `INSERT INTO customers (id, account_id, livemode, name, email, metadata, created_at, updated_at, deleted_at, test_clock_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [change.customer.id, tenant.accountId, tenant.livemode, change.customer.name, change.customer.email, '{}', change.customer.createdAt, change.customer.updatedAt, null, null],
    );
    await appendToOutbox(notifyingInside(tx), PRODUCER, change.events.flatMap(translateCustomerEvent));
    return { customer: toCustomerMessage(change.customer) };
  }),
  pg: (change) => viaPg.run(tenant, { requestId: `req_${randomBytes(9).toString('hex')}` }, response, async (tx) => {
    await repository.insert(tx, change);
    return { customer: toCustomerMessage(change.customer) };
  }),
};

/** CPU milliseconds of PostgreSQL's processes (children of this one) so far. */
function postgresCpuMs() {
  let ticks = 0;
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* exited */ }
  }
  return ticks * 10;
}

async function phase(way) {
  const latencies = [];
  const cpu = process.cpuUsage();
  const pgCpu = postgresCpuMs();
  const started = performance.now();
  const deadline = Date.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, worker) => {
    for (let i = 0; Date.now() < deadline; i++) {
      const t0 = performance.now();
      await ways[way](createCustomer(tenant, { name: `Bench ${worker}-${i}`, email: `bench${worker}.${i}@example.com` }, new Date()));
      latencies.push(performance.now() - t0);
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
  const n = latencies.length;
  console.log(`| ${way} | ${(n / elapsed).toFixed(0)} /s | ${at(0.5)} ms | ${at(0.99)} ms | ${((used.user + used.system) / n).toFixed(0)} µs | ${((1000 * (postgresCpuMs() - pgCpu)) / n).toFixed(0)} µs |`);
}

for (const way of Object.keys(ways)) for (let i = 0; i < 30; i++) await ways[way](createCustomer(tenant, { name: 'Warm', email: 'warm@example.com' }, new Date()));
console.log(`\nCustomer-create command, ${CONCURRENCY} concurrent, ${SECONDS} s per phase; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
console.log('| way | commands | p50 | p99 | Node CPU per command | PostgreSQL CPU per command |');
console.log('|---|---|---|---|---|---|');
for (let round = 0; round < ROUNDS; round++) for (const way of Object.keys(ways)) await phase(way);
console.log(`\nload average after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await prisma.$disconnect();
await postgres.stop();
