#!/usr/bin/env node
// `npm run test:mutation [lib…]`: StrykerJS over the pure libraries, one run per library
// (stryker.config.mjs), then one line per library with its mutation score. Offline: Stryker
// and its Jest runner are devDependencies. Each run's full report (every surviving mutant
// with its diff) is in reports/mutation/<lib>.log and <lib>.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const libs = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['pricing', 'kernel', 'money', 'webhooks'];
const reports = join(root, 'reports', 'mutation');
mkdirSync(reports, { recursive: true });

const rows = [];
for (const lib of libs) {
  const started = Date.now();
  process.stdout.write(`mutating libs/${lib} … `);
  const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs'], { cwd: root, env: { ...process.env, STRYKER_LIB: lib }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  writeFileSync(join(reports, `${lib}.log`), `${run.stdout}\n${run.stderr}`);
  const seconds = Math.round((Date.now() - started) / 1000);
  if (run.status !== 0) {
    console.log(`failed (exit ${run.status}); see reports/mutation/${lib}.log`);
    rows.push({ lib, seconds, failed: true });
    continue;
  }
  const report = JSON.parse(readFileSync(join(reports, `${lib}.json`), 'utf8'));
  const count = {};
  for (const file of Object.values(report.files)) for (const mutant of file.mutants) count[mutant.status] = (count[mutant.status] ?? 0) + 1;
  const detected = (count.Killed ?? 0) + (count.Timeout ?? 0);
  const undetected = (count.Survived ?? 0) + (count.NoCoverage ?? 0);
  const score = (100 * detected) / Math.max(1, detected + undetected);
  rows.push({ lib, seconds, score, detected, survived: count.Survived ?? 0, noCoverage: count.NoCoverage ?? 0, ignored: count.Ignored ?? 0 });
  console.log(`${score.toFixed(1)} % in ${seconds} s`);
}

console.log('\nlibrary   score   killed  survived  no-cov  ignored  time');
for (const row of rows) {
  if (row.failed) console.log(`${row.lib.padEnd(9)} failed${' '.repeat(39)}${row.seconds} s`);
  else console.log(`${row.lib.padEnd(9)} ${row.score.toFixed(1).padStart(5)} %  ${String(row.detected).padStart(6)}  ${String(row.survived).padStart(8)}  ${String(row.noCoverage).padStart(6)}  ${String(row.ignored).padStart(7)}  ${row.seconds} s`);
}
process.exitCode = rows.some((row) => row.failed) ? 1 : 0;
