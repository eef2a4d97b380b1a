// Measuring for the benchmarks (tools/bench/*.mjs): closed and open loops, percentiles, one line per phase.
// `request(worker, i)` resolves to true when the request succeeded; false or a throw is an error.
import { Agent, request as httpRequest } from 'node:http';

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Closed loop: `concurrency` workers, each sending its next request when the last one answered. */
export async function closedLoop(request, { seconds, concurrency }) {
  const latencies = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const t0 = performance.now();
        const ok = await request(worker, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  return summarise(latencies, errors, (performance.now() - started) / 1000);
}

/** Open loop: requests start at a fixed rate whatever the answers, so queueing shows in the latency. */
export async function openLoop(rate, request, { seconds, concurrency }) {
  const latencies = [];
  let errors = 0;
  const total = Math.max(1, Math.round(rate * seconds));
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i / rate) * 1000;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      (async () => {
        const t0 = performance.now();
        const ok = await request(i % concurrency, i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      })(),
    );
  }
  await Promise.all(inFlight);
  return summarise(latencies, errors, (performance.now() - started) / 1000);
}

export function summarise(latencies, errors, elapsed) {
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, rate: latencies.length / elapsed, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), errors };
}

export const ms = (v) => `${v.toFixed(1)} ms`;
export function printPhase(name, r) {
  console.log(
    `${name.padEnd(30)} ${String(r.count).padStart(7)}  ${r.rate.toFixed(0).padStart(6)} /s  p50 ${ms(r.p50).padStart(9)}  p90 ${ms(r.p90).padStart(9)}  p99 ${ms(r.p99).padStart(9)}  errors ${r.errors}`,
  );
}

/** Keep-alive HTTP calls to `/v1` with one API key: `call(method, path, body)` answers status, headers and the body's bytes. */
export function httpClient({ url, key, maxSockets }) {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const call = (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        { agent, host: target.hostname, port: target.port, method, path, headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return { call, agent };
}
