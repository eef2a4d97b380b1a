#!/usr/bin/env node
// Brings a fresh clone to a runnable state: installs dependencies when the lockfile
// changed (or none are installed) and builds every project (proto and Prisma code
// generation included). Used by `npm start`, `npm test` and `npm run build`.
// `quiet` (npm start) prints one progress line per step and the tools' output only on failure.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function run(command, args, { quiet = false, progress } = {}) {
  if (!quiet) {
    console.error(`» ${command} ${args.join(' ')}`);
    execFileSync(command, args, { cwd: ROOT, stdio: 'inherit' });
    return;
  }
  const started = Date.now();
  process.stderr.write(`${progress} `);
  try {
    execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    process.stderr.write('failed\n');
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`);
    throw error;
  }
  process.stderr.write(`done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
}

export function ensureInstalled({ quiet = false } = {}) {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  run('npm', ['ci', '--no-audit', '--no-fund'], { quiet, progress: 'Installing dependencies (npm ci; about a minute on a first start)…' });
}

export function buildAll({ quiet = false } = {}) {
  run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=stream-without-prefixes'], {
    quiet,
    progress: 'Building (gRPC and Prisma code generation, SWC; cached after the first start)…',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureInstalled();
  if (!process.argv.includes('--install-only')) buildAll();
}
