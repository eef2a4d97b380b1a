#!/usr/bin/env node
// A real webhook receiver for tests, run as its own process:
//   node webhook-receiver.mjs <port>
// Each endpoint URL says how to behave, so one receiver serves many endpoints:
//   /hooks/<name>                answer 200
//   /hooks/<name>?fail=N         answer 500 to the first N deliveries of each event id, then 200
//   /hooks/<name>?mode=hang      never answer
//   /hooks/<name>?mode=hold      keep each delivery unanswered until POST /_release?path=/hooks/<name>,
//                                which answers every held one 500 (a failed attempt that lasts
//                                exactly as long as the test wants)
// GET /_received?path=/hooks/<name> returns what arrived there: arrival time (ms), headers
// and the raw body, exactly as received. It knows nothing of Recur's code.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const received = [];
const seenPerEvent = new Map();
/** Held answers by path. */
const held = new Map();

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://receiver');
  if (req.method === 'GET' && url.pathname === '/_received') {
    const path = url.searchParams.get('path');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(received.filter((entry) => !path || entry.path === path)));
    return;
  }
  if (req.method === 'POST' && url.pathname === '/_release') {
    const path = url.searchParams.get('path');
    const released = held.get(path) ?? [];
    held.delete(path);
    for (const answer of released) {
      answer.writeHead(500, { 'content-type': 'text/plain' });
      answer.end('released by the test');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ released: released.length }));
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    const arrivedAt = Date.now();
    received.push({ path: url.pathname, query: url.search, arrivedAt, headers: req.headers, body: raw });
    if (url.searchParams.get('mode') === 'hang') return; // never answer
    if (url.searchParams.get('mode') === 'hold') {
      held.set(url.pathname, [...(held.get(url.pathname) ?? []), res]);
      return;
    }
    let eventId = 'unknown';
    try { eventId = JSON.parse(raw).id; } catch { /* not JSON */ }
    const key = `${url.pathname}|${eventId}`;
    const count = (seenPerEvent.get(key) ?? 0) + 1;
    seenPerEvent.set(key, count);
    const failFirst = Number(url.searchParams.get('fail') ?? 0);
    if (count <= failFirst) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`failing on purpose (${count} of ${failFirst})`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
