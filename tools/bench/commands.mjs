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
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { benchDir, closedLoop, cpuBetween, cpuByGroup, descendantsNamed, loadAverage } from './harness.mjs';

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

const postgres = await startEmbeddedPostgres({ dataDir: join(benchDir('commands'), 'postgres'), persistent: true });
await postgres.ensureDatabase('recur_subscription');
const databaseUrl = postgres.urlFor('recur_subscription');
await applyMigrations({ databaseUrl, migrationsDir: join(ROOT, 'apps', 'subscription', 'prisma', 'migrations'), libraries: [require('@recur/messaging').MESSAGING_MIGRATIONS, require('@recur/persistence').PERSISTENCE_MIGRATIONS] });
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

/** This process (Node) and PostgreSQL's processes (its children). */
const measured = { processGroups: (table) => ({ postgresql: descendantsNamed(table, process.pid, 'postgres') }) };

async function phase(way) {
  const before = cpuByGroup(measured);
  const r = await closedLoop({ seconds: SECONDS, concurrency: CONCURRENCY }, async (worker, i) => {
    await ways[way](createCustomer(tenant, { name: `Bench ${worker}-${i}`, email: `bench${worker}.${i}@example.com` }, new Date()));
    return true;
  });
  if (r.errors > 0) throw new Error(`${way}: ${r.errors} commands failed`);
  const used = cpuBetween(before, cpuByGroup(measured));
  const perCommand = (ms) => `${((1000 * ms) / r.count).toFixed(0)} µs`;
  console.log(`| ${way} | ${r.rate.toFixed(0)} /s | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${perCommand(used['bench client'])} | ${perCommand(used.postgresql)} |`);
}

for (const way of Object.keys(ways)) for (let i = 0; i < 30; i++) await ways[way](createCustomer(tenant, { name: 'Warm', email: 'warm@example.com' }, new Date()));
console.log(`\nCustomer-create command, ${CONCURRENCY} concurrent, ${SECONDS} s per phase; load average ${loadAverage()}\n`);
console.log('| way | commands | p50 | p99 | Node CPU per command | PostgreSQL CPU per command |');
console.log('|---|---|---|---|---|---|');
for (let round = 0; round < ROUNDS; round++) for (const way of Object.keys(ways)) await phase(way);
console.log(`\nload average after: ${loadAverage()}`);
await prisma.$disconnect();
await postgres.stop();
