#!/usr/bin/env node
// Brings a fresh clone to a runnable state: installs dependencies when the lockfile
// changed (or none are installed) and builds every project (proto and Prisma code
// generation included). Used by `npm start`, `npm test` and `npm run build`.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function run(command, args, options = {}) {
  console.error(`» ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd: ROOT, stdio: 'inherit', ...options });
}

export function ensureInstalled() {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const lock = join(ROOT, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

export function buildAll() {
  run('npx', ['nx', 'run-many', '-t', 'build', '--output-style=stream-without-prefixes']);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureInstalled();
  if (!process.argv.includes('--install-only')) buildAll();
}
