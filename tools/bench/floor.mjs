#!/usr/bin/env node
// The floor under `/v1` on this machine: what a request costs in Node.js CPU when a server does
// nothing but the transport work the spine cannot avoid. One server process (like `npm start`)
// answers POST /echo with the JSON body it got, (1) by itself, (2) after a unary grpc-js call to
// an echo service in the same process over loopback (the gateway → service hop), (3) after that
// call and one `pg` statement (`SELECT $1::text`) on the server side. No Nest, no Express, no
// OpenTelemetry, no protobuf (the gRPC messages are the JSON bytes).
//
//   node tools/bench/floor.mjs          # BENCH_SECONDS (10), BENCH_CONCURRENCY (16); PostgreSQL for (3)
//                                        # from RECUR_TEST_PG_ADMIN_URL, or an embedded one
//
// Prints rate, p50/p99 and the server's CPU per request (µs), the figure to set against
// `npm run bench`'s Node CPU per request.
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { benchDir, closedLoop, cpuMs, loadAverage, ms, v1Client } from './harness.mjs';

const require = createRequire(import.meta.url);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

if (process.argv[2] === 'server') {
  // The server: an HTTP front and a gRPC echo service in this one process.
  const grpc = require('@grpc/grpc-js');
  const { createServer } = require('node:http');
  const { Pool } = require('pg');
  const bytes = { serialize: (value) => value, deserialize: (value) => value };
  const method = { path: '/floor.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: bytes.serialize, requestDeserialize: bytes.deserialize, responseSerialize: bytes.serialize, responseDeserialize: bytes.deserialize };
  const pool = process.env.FLOOR_DATABASE_URL ? new Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: 10 }) : undefined;
  const server = new grpc.Server();
  server.addService({ Echo: method }, {
    Echo: (call, callback) => {
      if (!pool || !call.metadata.get('with-sql').length) return callback(null, call.request);
      pool.query('SELECT $1::text AS body', [call.request.toString()]).then(({ rows }) => callback(null, Buffer.from(rows[0].body)), callback);
    },
  });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, grpcPort) => {
    if (error) throw error;
    const Client = grpc.makeGenericClientConstructor({ Echo: method });
    const client = new Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    const http = createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const answer = (status, payload) => res.writeHead(status, { 'content-type': 'application/json', 'content-length': payload.length }).end(payload);
        if (req.url === '/echo') return answer(200, body);
        const metadata = new grpc.Metadata();
        if (req.url === '/echo-grpc-sql') metadata.set('with-sql', '1');
        client.Echo(body, metadata, (grpcError, reply) => (grpcError ? answer(500, Buffer.from('{}')) : answer(200, reply)));
      });
    });
    http.keepAliveTimeout = 60_000;
    http.listen(0, '127.0.0.1', () => process.send({ port: http.address().port }));
  });
} else {
  let postgres;
  let databaseUrl = process.env.RECUR_TEST_PG_ADMIN_URL;
  if (!databaseUrl) {
    const { startEmbeddedPostgres } = require('@recur/local-infra');
    postgres = await startEmbeddedPostgres({ dataDir: `${benchDir('floor')}/postgres` });
    databaseUrl = postgres.urlFor('postgres');
  }
  const child = fork(fileURLToPath(import.meta.url), ['server'], { env: { ...process.env, FLOOR_DATABASE_URL: databaseUrl }, stdio: 'inherit' });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  const { call, close } = v1Client({ url: `http://127.0.0.1:${port}`, key: 'none' }, CONCURRENCY * 4);
  const body = { name: 'Bench 1-1', email: 'bench1.1@example.com', metadata: {} };
  console.log(`\nThe floor: a bare Node.js HTTP server, ${CONCURRENCY} concurrent clients, ${SECONDS} s per phase; load average ${loadAverage()}`);
  console.log('| server work per request | rate | p50 | p99 | server CPU per request |');
  console.log('|---|---|---|---|---|');
  for (const [path, what] of [['/echo', 'HTTP only'], ['/echo-grpc', 'HTTP + one loopback grpc-js unary call'], ['/echo-grpc-sql', 'HTTP + grpc-js call + one pg statement']]) {
    for (let i = 0; i < 200; i++) await call('POST', path, body);
    const before = cpuMs(child.pid);
    const result = await closedLoop({ seconds: SECONDS, concurrency: CONCURRENCY }, async () => (await call('POST', path, body)).status === 200);
    const cpuPerRequest = ((cpuMs(child.pid) - before) * 1000) / result.count;
    console.log(`| ${what} | ${result.rate.toFixed(0)} /s | ${ms(result.p50)} | ${ms(result.p99)} | ${cpuPerRequest.toFixed(0)} µs |`);
  }
  console.log(`load average after: ${loadAverage()}`);
  close();
  child.kill();
  await postgres?.stop();
}
