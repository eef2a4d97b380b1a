#!/usr/bin/env node
// Invoices through `/v1`: raising them (create a draft, then finalize it: numbered under the
// per-app counter lock, its e-mail queued) and rendering their PDFs on demand, on `npm start`'s
// single process in a fresh data directory.
//
//   npm run bench:invoices
//
// Options (environment): BENCH_SECONDS (10 per phase), BENCH_CONCURRENCY (16), BENCH_LINES (3
// lines per invoice), BENCH_MAIL=false (finalization sends no e-mail; by default every invoice is
// mailed, PDF attached, to `npm start`'s mail catcher, as in production).
//
// Prints invoices/s and PDF renders/s with p50/p90/p99, then how many e-mails reached the catcher.
// An invoice's latency is its two calls (create + finalize) end to end; all clients' invoices
// share one account and app, so finalizations also queue on its number counter.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../bootstrap.mjs';
import { closedLoop, httpClient, printPhase } from './measure.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const LINES = Number(process.env.BENCH_LINES ?? 3);
const MAIL = process.env.BENCH_MAIL !== 'false';
const loop = { seconds: SECONDS, concurrency: CONCURRENCY };

execFileSync('node', ['tools/bootstrap.mjs'], { cwd: ROOT, stdio: 'inherit' });
const require = createRequire(import.meta.url);

/** `npm start` in a fresh data directory on ports of its own; answers the URL, the sandbox key and the mail folder. */
async function startStack() {
  const dataDir = mkdtempSync(join(tmpdir(), 'recur-bench-invoices-'));
  chmodSync(dataDir, 0o755);
  const port = 18080 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, ['tools/start.mjs'], {
    cwd: ROOT,
    env: {
      ...process.env, RECUR_SKIP_BUILD: '1', RECUR_DATA_DIR: dataDir, PORT: String(port), RECUR_PG_PORT: String(port + 1000), METRICS_PORT: String(port + 2000),
      RECUR_GRPC_BASE_PORT: String(port + 3000), RECUR_SMTP_PORT: String(port + 4000), LOG_LEVEL: 'warn', KAFKA_BROKERS: '', SMTP_URL: '',
      INVOICE_MAIL_ON_FINALIZE: String(MAIL),
    },
    // The catcher's one line per mail goes to stderr: not shown, it would drown the figures.
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  const key = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /sandbox secret\s+(recur_test_sk_\w+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`stack exited (${code}):\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    mailDir: join(dataDir, 'mail'),
    async stop() {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const startedAt = Date.now();
const stack = await startStack();
const { call, agent } = httpClient({ url: stack.url, key: stack.key, maxSockets: CONCURRENCY * 2 });
console.log(`\nRecur invoice benchmark (\`npm start\`: all seven apps in one Node.js process; e-mail at finalization ${MAIL ? 'on' : 'off'})`);
console.log(`${CONCURRENCY} concurrent clients, ${SECONDS} s per phase, ${LINES} lines per invoice; stack ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
console.log(`load average before: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${require('node:os').availableParallelism()} cores\n`);

// One customer per client.
const customers = [];
for (let worker = 0; worker < CONCURRENCY; worker++) {
  const { status, body } = await call('POST', '/v1/customers', { name: `Bench payer ${worker}`, email: `payer${worker}@example.com` });
  if (status !== 201) throw new Error(`customer: ${status} ${body}`);
  customers.push(JSON.parse(body.toString()).id);
}

const finalized = [];
/** One invoice raised: a draft with LINES lines, then finalized; true when both answered as they should. */
async function raiseInvoice(worker, i) {
  const lines = Array.from({ length: LINES }, (_, line) => ({ description: `Service ${line + 1}, order ${worker}-${i}`, amount: 1_000 + line * 250 + i, quantity: line + 1 }));
  const draft = await call('POST', '/v1/invoices', { customer: customers[worker], lines, description: `Bench order ${worker}-${i}` });
  if (draft.status !== 201) return false;
  const { id } = JSON.parse(draft.body.toString());
  const open = await call('POST', `/v1/invoices/${id}/finalize`);
  if (open.status !== 200) return false;
  finalized.push(id);
  return true;
}

/** One PDF rendered on demand: a finalized invoice, spread over all of them. */
async function renderPdf(worker, i) {
  const { status, headers, body } = await call('GET', `/v1/invoices/${finalized[(worker * 7919 + i) % finalized.length]}/pdf`);
  return status === 200 && headers['content-type'] === 'application/pdf' && body.subarray(0, 5).toString() === '%PDF-';
}

// Warm-up: JIT, pools, the font files.
for (let i = 0; i < 20; i++) if (!(await raiseInvoice(0, -1 - i)) || !(await renderPdf(0, i))) throw new Error('warm-up failed');

const invoices = await closedLoop(raiseInvoice, loop);
printPhase('invoices (create + finalize)', invoices);
const pdfs = await closedLoop(renderPdf, loop);
printPhase('PDF renders (GET …/pdf)', pdfs);

// The e-mails keep leaving after the invoices phase: wait until every finalized invoice's mail is caught.
const expectedMails = MAIL ? finalized.length : 0;
const mailsCaught = () => readdirSync(stack.mailDir).filter((file) => file.endsWith('.eml')).length;
const mailWaitStarted = Date.now();
while (MAIL && mailsCaught() < expectedMails && Date.now() - mailWaitStarted < 120_000) await new Promise((resolve) => setTimeout(resolve, 200));

console.log('\n| work | rate | p50 | p90 | p99 | errors |');
console.log('|---|---|---|---|---|---|');
for (const [work, r] of [['raise an invoice (create + finalize)', invoices], ['render a PDF on demand', pdfs]]) {
  console.log(`| ${work} | ${r.rate.toFixed(1)} /s | ${r.p50.toFixed(1)} ms | ${r.p90.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.errors} |`);
}
if (MAIL) console.log(`\ne-mails caught: ${mailsCaught()} of ${expectedMails} finalized invoices (each with its PDF), ${((Date.now() - mailWaitStarted) / 1000).toFixed(1)} s after the PDF phase`);
console.log(`load average after: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);

agent.destroy();
await stack.stop();
