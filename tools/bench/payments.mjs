#!/usr/bin/env node
// Payments through the sandbox provider, end to end: POST /v1/payments/initiate on the gateway,
// the payer's Approve on the sandbox payer page (GET the page for its CSRF token, POST the
// form), the settlement told to invoicing by the payments janitor, and invoice.paid on Kafka.
// Every app is its own process (gateway, subscription, invoicing, payments), one PostgreSQL,
// one Kafka broker.
//
//   npm run bench:payments            # BENCH_PAYMENTS=300 BENCH_CONCURRENCY=8 by default
//
// Prints settled payments/s (first initiation → last invoice.paid) and the latency from the
// start of an initiation to its invoice.paid on Kafka, p50/p90/p99, with where it goes
// (initiate, the payer's page round trip, settlement → invoice.paid).
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { ROOT } from '../bootstrap.mjs';
import { benchDir, latencySummary, operatorSandboxKey, printWarnings, startInfrastructure, v1Client } from './harness.mjs';

const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { freePort, NO_INVOICE_MAIL, startApp } = require('@recur/testing');
const { Kafka, logLevel } = require('kafkajs');
const { decodePublicEvent, publicEventsTopic } = require('@recur/messaging');

const infrastructure = await startInfrastructure(benchDir('payments'));
const { postgres, brokers } = infrastructure;

const prefix = `bench-${randomBytes(3).toString('hex')}`;
const [subscriptionPort, invoicingPort, paymentsPort, httpPort, adminPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
const baseUrl = `http://127.0.0.1:${httpPort}`;
const operatorToken = randomBytes(16).toString('hex');
const apps = [];
// Whatever happens, the processes this bench started stop with it.
process.on('exit', () => apps.forEach((app) => app.kill('SIGTERM')));
process.on('uncaughtException', (error) => {
  console.error(error);
  process.exit(1);
});
async function start(app, port, env) {
  await postgres.ensureDatabase(`bench_${app}`);
  apps.push(await startApp(app, {
    env: { DATABASE_URL: postgres.urlFor(`bench_${app}`), KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, METRICS_PORT: '0', GRPC_HOST: '127.0.0.1', GRPC_PORT: String(port), ...env },
    ready: app === 'gateway' ? { httpUrl: `${baseUrl}/readyz` } : { grpcPort: port },
    timeoutMs: 120_000,
  }));
}
const peers = { SUBSCRIPTION_GRPC_ADDR: `127.0.0.1:${subscriptionPort}`, INVOICING_GRPC_ADDR: `127.0.0.1:${invoicingPort}`, PAYMENTS_GRPC_ADDR: `127.0.0.1:${paymentsPort}` };
// Started side by side: subscription and invoicing wait for each other's gRPC.
await Promise.all([
  start('subscription', subscriptionPort, { ...peers, CATALOG_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9' }),
  // The bench measures payments: invoices are not e-mailed.
  start('invoicing', invoicingPort, { ...peers, ...NO_INVOICE_MAIL, PAYMENT_PAGE_URL: `${baseUrl}/pay` }),
  start('payments', paymentsPort, { ...peers, PAYMENT_PAGES_URL: baseUrl }),
]);
await start('gateway', 0, { ...peers, CATALOG_GRPC_ADDR: '127.0.0.1:9', USAGE_METERING_GRPC_ADDR: '127.0.0.1:9', WEBHOOK_DISPATCH_GRPC_ADDR: '127.0.0.1:9', HTTP_HOST: '127.0.0.1', HTTP_PORT: String(httpPort), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(adminPort), RECUR_OPERATOR_TOKEN: operatorToken });

const key = await operatorSandboxKey(`http://127.0.0.1:${adminPort}`, operatorToken);
const api = v1Client({ url: baseUrl, key }, 16 + CONCURRENCY);
async function call(method, path, body) {
  for (let attempt = 0; ; attempt++) {
    const { status, body: bytes } = await api.call(method, path, body);
    // The services may still be starting (503) on the first calls.
    if (status === 503 && attempt < 100) { await new Promise((r) => setTimeout(r, 300)); continue; }
    return { status, body: JSON.parse(bytes.toString()) };
  }
}

// invoice.paid arrivals on Kafka, by invoice id.
const paidAt = new Map();
const kafkaClient = new Kafka({ clientId: 'bench-payments', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const paidTopic = publicEventsTopic('invoicing', { KAFKA_TOPIC_PREFIX: prefix });
const admin = kafkaClient.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic: paidTopic, numPartitions: 3 }], waitForLeaders: true }).catch(() => undefined);
await admin.disconnect();
const consumer = kafkaClient.consumer({ groupId: `${prefix}-bench` });
await consumer.connect();
await consumer.subscribe({ topic: paidTopic, fromBeginning: true });
await consumer.run({
  eachMessage: async ({ message }) => {
    const event = decodePublicEvent(message.value.toString());
    if (event.type === 'invoice.paid') paidAt.set(event.aggregateId, Date.now());
  },
});

console.error(`preparing ${PAYMENTS} open invoices…`);
const { body: customer } = await call('POST', '/v1/customers', { name: 'Bench Payer', email: 'payer@example.com' });
const invoices = [];
for (let i = 0; i < PAYMENTS; i += 16) {
  const batch = await Promise.all(Array.from({ length: Math.min(16, PAYMENTS - i) }, () => call('POST', '/v1/invoices', { customer: customer.id, amount: 15_000, currency: 'zmw', description: 'Bench', status: 'open' })));
  for (const { status, body } of batch) {
    if (status !== 201) throw new Error(`invoice creation failed: ${status} ${JSON.stringify(body)}`);
    invoices.push(body.id);
  }
}

const timings = new Map();
async function pay(invoiceId) {
  const startedAt = Date.now();
  const { status, body } = await call('POST', '/v1/payments/initiate', { invoice_id: invoiceId, phone_number: '+260971000001', provider: 'MTN_MOMO_ZMB' });
  if (status !== 201) throw new Error(`initiate failed: ${status} ${JSON.stringify(body)}`);
  const initiatedAt = Date.now();
  const page = await fetch(body.redirectUrl);
  const cookie = page.headers.get('set-cookie').split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())[1];
  const approved = await fetch(body.redirectUrl, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ decision: 'approve', csrf }) });
  if (approved.status !== 303) throw new Error(`approve failed: ${approved.status}`);
  timings.set(invoiceId, { startedAt, initiatedAt, approvedAt: Date.now() });
}

console.error(`paying ${PAYMENTS} invoices, ${CONCURRENCY} payers at once…`);
const started = Date.now();
let next = 0;
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < invoices.length) await pay(invoices[next++]);
}));
while (paidAt.size < PAYMENTS && Date.now() - started < 600_000) await new Promise((resolve) => setTimeout(resolve, 50));
const lastPaid = Math.max(...paidAt.values());

const summary = (values) => latencySummary(values, { max: true });
const done = invoices.filter((id) => paidAt.has(id) && timings.has(id));
const seconds = (lastPaid - started) / 1000;
console.log(`\nRecur payments benchmark: ${PAYMENTS} sandbox payments, ${CONCURRENCY} payers at once, gateway + subscription + invoicing + payments as processes, Kafka`);
console.log(`settled ${paidAt.size}/${PAYMENTS} (invoice.paid on Kafka) in ${seconds.toFixed(1)} s: ${(paidAt.size / seconds).toFixed(1)} payments/s`);
console.log(`initiation → invoice.paid: ${summary(done.map((id) => paidAt.get(id) - timings.get(id).startedAt))}`);
console.log(`  initiate (POST /v1/payments/initiate): ${summary(done.map((id) => timings.get(id).initiatedAt - timings.get(id).startedAt))}`);
console.log(`  payer page (GET, then POST Approve):   ${summary(done.map((id) => timings.get(id).approvedAt - timings.get(id).initiatedAt))}`);
console.log(`  approved → invoice.paid on Kafka:      ${summary(done.map((id) => paidAt.get(id) - timings.get(id).approvedAt))}`);

printWarnings(apps);
api.close();
await consumer.disconnect();
await Promise.all(apps.map((app) => app.kill('SIGTERM')));
await infrastructure.stop();
