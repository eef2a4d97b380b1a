#!/usr/bin/env node
// Webhook fan-out throughput and latency: N events pushed through Kafka to K endpoints on a
// local receiver, through a real webhook-dispatch process and PostgreSQL.
//
//   npm run bench:webhooks            # BENCH_EVENTS=1000 BENCH_ENDPOINTS=5 by default
//   BENCH_ENDPOINTS=1 npm run bench:webhooks   # the issue's burst literally: 1 000 events to one endpoint
//   BENCH_RATE=100 npm run bench:webhooks   # produce at a steady 100 events/s instead of one burst
//   BENCH_WARMUP=0 npm run bench:webhooks   # no warm-up burst (200 events by default, not measured)
//
// Prints deliveries/s and event-to-delivery latency (Kafka produce → receiver arrival) p50/p90/p99,
// where a delivery's time went (from the stored rows: queued → first attempt started, the post,
// post answered → outcome committed) and the dispatcher's CPU per delivery.
// A burst measures throughput (latency is then mostly queueing); a steady rate below capacity
// measures the pipeline's own latency. In the same run, a plain HTTP client (Node's http, the
// dispatcher's concurrency, keep-alive) posts the same bodies to the same receiver: the ratio of
// the two rates says how much of the receiver's speed the pipeline keeps.
// BENCH_PROFILE=<dir> writes a `--cpu-prof` profile of the webhook-dispatch process and
// summarises the burst's part of it.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { resolve as resolvePath } from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { ROOT } from '../bootstrap.mjs';
import { benchDir, cpuMs, latencySummary, loadAverage, monotonicMicros, printWarnings, profileArgs, startInfrastructure, summariseProfiles } from './harness.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 0);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 5);
/** Events delivered before the measured burst, to every endpoint, and left out of every figure. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);
/** The dispatcher's WEBHOOK_CONCURRENCY (its default unless set): the plain client posts as many at once. */
const CONCURRENCY = Number(process.env.WEBHOOK_CONCURRENCY ?? 32);
const PROFILE_DIR = process.env.BENCH_PROFILE ? resolvePath(process.env.BENCH_PROFILE) : undefined;
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);
const { freePort, startApp } = require('@recur/testing');
const { createServiceClient, webhookDispatchV1 } = require('@recur/contracts');
const { Kafka, logLevel } = require('kafkajs');
const { encodeEvent, newPublicEvent, publicEventsTopic } = require('@recur/messaging');

const infrastructure = await startInfrastructure(benchDir('webhooks'));
const { postgres, brokers } = infrastructure;
await postgres.ensureDatabase('bench_webhooks');

// The receiver: records when each (endpoint, event) arrives.
const arrivals = new Map();
/** The events of the phase under way (warm-up, then the measured burst), by id: when each was produced. */
let producing = new Map();
let firstArrival = Infinity;
let lastArrival = 0;
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const now = Date.now();
    const { id } = JSON.parse(Buffer.concat(chunks).toString());
    const key = `${req.url}|${id}`;
    // Only the phase's own events count (a warm-up event's late retry does not).
    if (!producing.has(id)) return res.writeHead(200).end();
    if (!arrivals.has(key)) arrivals.set(key, now);
    firstArrival = Math.min(firstArrival, now);
    lastArrival = Math.max(lastArrival, now);
    res.writeHead(200).end();
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

const grpcPort = await freePort();
const prefix = `bench-${randomBytes(3).toString('hex')}`;
const dispatch = await startApp('webhook-dispatch', {
  env: { DATABASE_URL: postgres.urlFor('bench_webhooks'), GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort), METRICS_PORT: '0', KAFKA_BROKERS: brokers, KAFKA_TOPIC_PREFIX: prefix, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_CONCURRENCY: String(CONCURRENCY) },
  ready: { grpcPort },
  nodeArgs: profileArgs(PROFILE_DIR, 'webhook-dispatch'),
});
const client = createServiceClient(webhookDispatchV1.WebhookDispatchService, `127.0.0.1:${grpcPort}`);
const tenant = { accountId: 'acct_bench', livemode: false };
for (let i = 0; i < ENDPOINTS; i++) {
  await client.createEndpoint({ tenant, url: `${receiverUrl}/endpoint-${i}`, events: ['customer.created'] }, { timeoutMs: 60_000 });
}

const producer = new Kafka({ clientId: 'bench', brokers: brokers.split(','), logLevel: logLevel.NOTHING }).producer();
await producer.connect();
const topic = publicEventsTopic('subscription', { KAFKA_TOPIC_PREFIX: prefix });
const expected = EVENTS * ENDPOINTS;

/** Produces `count` events (at RATE a second, or in batches of 100 one after another) and records when each was sent. */
async function produce(count, producedAt) {
  const from = Date.now();
  const batchSize = RATE > 0 ? Math.max(1, Math.round(RATE / 10)) : 100;
  for (let offset = 0; offset < count; offset += batchSize) {
    if (RATE > 0) {
      const due = from + (offset / RATE) * 1000;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
    const batch = [];
    for (let i = offset; i < Math.min(count, offset + batchSize); i++) {
      const event = newPublicEvent(tenant, 'customer.created', `cus_${i}`, { object: { id: `cus_${i}`, object: 'customer' } }, new Date());
      batch.push({ key: event.aggregateId, value: JSON.stringify(encodeEvent(event)) });
      producedAt.set(event.id, Date.now());
    }
    await producer.send({ topic, messages: batch });
  }
}

/** Waits until `count` deliveries arrived. */
async function arrived(count, since) {
  while (arrivals.size < count && Date.now() - since < 600_000) await new Promise((resolve) => setTimeout(resolve, 100));
}

// A warm-up burst first (not measured): a running dispatcher has its code compiled, its
// connections open and its lazy modules loaded, which a process started a moment ago has not.
if (WARMUP > 0) {
  producing = new Map();
  await produce(WARMUP, producing);
  await arrived(WARMUP * ENDPOINTS, Date.now());
  arrivals.clear();
  firstArrival = Infinity;
  lastArrival = 0;
}

const producedAt = new Map();
producing = producedAt;
const started = Date.now();
const dispatchCpuBefore = cpuMs(dispatch.pid);
const profileFrom = monotonicMicros();
await produce(EVENTS, producedAt);
await arrived(expected, started);

const dispatchCpu = cpuMs(dispatch.pid) - dispatchCpuBefore;
const profileTo = monotonicMicros();
const latencies = [...arrivals].map(([key, at]) => at - producedAt.get(key.split('|')[1]));
const seconds = (lastArrival - started) / 1000;
const deliveryRate = arrivals.size / seconds;
console.log(`\nRecur webhook benchmark: ${EVENTS} events × ${ENDPOINTS} endpoints through Kafka and one webhook-dispatch process, ${RATE > 0 ? `${RATE} events/s` : 'one burst'}`);
console.log(`load average: ${loadAverage()}`);
console.log(`delivered ${arrivals.size}/${expected} in ${seconds.toFixed(1)} s: ${deliveryRate.toFixed(0)} deliveries/s`);
console.log(`event-to-delivery latency ${latencySummary(latencies, { max: true })}`);
console.log(`webhook-dispatch CPU (consumer and dispatcher): ${(dispatchCpu / 1000).toFixed(1)} s, ${((1000 * dispatchCpu) / arrivals.size).toFixed(0)} µs per delivery`);

// Where the time goes: Kafka → recorded by the consumer, and recorded → arrived at the receiver.
const { Client } = require('pg');
const db = new Client({ connectionString: postgres.urlFor('bench_webhooks') });
await db.connect();
const rows = (await db.query('SELECT id, received_at FROM events')).rows.filter((row) => producedAt.has(row.id));
// Each delivery's first attempt: queued (created_at), attempt started (after the claim), the post's
// duration, and when its outcome was written (updated_at, stamped as the record is sent).
const { rows: firstAttempts } = await db.query(`
  SELECT d.event_id, d.created_at, a.attempted_at, a.duration_ms, d.updated_at
  FROM deliveries d JOIN delivery_attempts a ON a.delivery_id = d.id AND a.number = 1`);
const measuredAttempts = firstAttempts.filter((row) => producedAt.has(row.event_id));
await db.end();
const recordedAt = new Map(rows.map((row) => [row.id, row.received_at.getTime()]));
console.log(`  produce → recorded by the consumer: ${latencySummary([...recordedAt].map(([id, at]) => at - producedAt.get(id)))}`);
// Events recorded together share their statement's transaction time: the consumer's batches.
const statementSizes = new Map();
for (const row of rows) statementSizes.set(row.received_at.getTime(), (statementSizes.get(row.received_at.getTime()) ?? 0) + 1);
const perStatement = [...statementSizes.values()].sort((a, b) => a - b);
console.log(`  the consumer's statements: ${perStatement.length}, events each: p50 ${perStatement[Math.floor(perStatement.length / 2)]}, max ${perStatement.at(-1)}`);
console.log(`  recorded → arrived at the receiver: ${latencySummary([...arrivals].map(([key, at]) => at - recordedAt.get(key.split('|')[1])))}`);
console.log(`  queued → attempt started (waiting for a claim): ${latencySummary(measuredAttempts.map((row) => row.attempted_at - row.created_at))}`);
console.log(`  the post (signed request → answer): ${latencySummary(measuredAttempts.map((row) => row.duration_ms))}`);
console.log(`  answer → outcome stamped for recording: ${latencySummary(measuredAttempts.map((row) => row.updated_at - row.attempted_at - row.duration_ms))}`);

// The same number of posts of the same bodies to the same receiver by a plain client.
const sampleBody = JSON.stringify({ id: 'evt_plain', type: 'customer.created', created: Math.floor(Date.now() / 1000), livemode: false, data: { object: { id: 'cus_0', object: 'customer' } } });
function plainPost(index) {
  const body = sampleBody.replace('evt_plain', `evt_plain_${index}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${receiverUrl}/plain-${index % ENDPOINTS}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`receiver answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const plainStarted = performance.now();
let nextPost = 0;
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (nextPost < expected) await plainPost(nextPost++);
}));
const plainSeconds = (performance.now() - plainStarted) / 1000;
const plainRate = expected / plainSeconds;
console.log(`plain HTTP client, same bodies, same receiver, ${CONCURRENCY} at once: ${expected} posts in ${plainSeconds.toFixed(2)} s, ${plainRate.toFixed(0)} posts/s; deliveries are ${((100 * deliveryRate) / plainRate).toFixed(1)} % of it`);
console.log(`load average after the plain client: ${loadAverage()}`);

await producer.disconnect();
client.close();
printWarnings([dispatch]);
await dispatch.kill('SIGTERM');
receiver.close();
await infrastructure.stop();
// The profile of the burst alone (produce → last arrival), not of the process's start.
if (PROFILE_DIR) summariseProfiles(PROFILE_DIR, [[profileFrom, profileTo]]);
