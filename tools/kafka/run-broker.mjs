#!/usr/bin/env node
// A single-node Kafka broker in the foreground, for local development.
//
//   node tools/kafka/run-broker.mjs [--port 9092] [--data-dir .data/kafka] [--verbose]
//
// Prints KAFKA_BROKERS=127.0.0.1:<port> once clients can connect; Ctrl-C stops it. Without
// --data-dir the data lives in a temporary directory that is removed on exit. The first run
// resolves the broker's jars with Maven (see tools/kafka/pom.xml) and caches them.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const lib = join(root, 'libs', 'local-infra');

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    verbose: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('usage: node tools/kafka/run-broker.mjs [--port 9092] [--data-dir DIR] [--verbose]');
  process.exit(0);
}
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  console.error(`invalid --port: ${values.port}`);
  process.exit(2);
}

// Build @recur/local-infra when its dist/ is missing or older than the source.
const built = join(lib, 'dist', 'kafka.js');
const source = join(lib, 'src', 'kafka.ts');
if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
  console.error('building @recur/local-infra ...');
  execFileSync('npm', ['run', 'build', '--silent', '--workspace', '@recur/local-infra'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
// dist/ is CommonJS: require() it rather than rely on ESM's detection of its named exports.
const { startKafkaBroker } = createRequire(import.meta.url)(join(lib, 'dist', 'index.js'));

const started = Date.now();
console.error(`starting Kafka on ${port === undefined ? 'a free port' : `port ${port}`} ...`);
const broker = await startKafkaBroker({
  port,
  dataDir: values['data-dir'],
  log: values.verbose ? (line) => console.error(line) : undefined,
});
console.log(`KAFKA_BROKERS=${broker.brokers}`);
console.error(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s; Ctrl-C to stop`);

let stopping = false;
const shutdown = async (signal) => {
  if (stopping) return;
  stopping = true;
  console.error(`${signal}: stopping Kafka ...`);
  await broker.stop();
  console.error('stopped');
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
