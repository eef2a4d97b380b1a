#!/usr/bin/env node
// The gateway's OpenAPI document (/openapi.json) lints clean: Redocly CLI's recommended rules and
// Spectral's `spectral:oas`, zero errors and zero warnings (hints included), as client generators
// and API tools read it. A step of `npm test`; on its own: `node tools/openapi/lint.mjs` (after
// building the gateway). docs/api/README.md#the-openapi-document tells what the document promises.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument, ROOT } from '../release/projects.mjs';

const dir = mkdtempSync(join(tmpdir(), 'recur-openapi-lint-'));
const file = join(dir, 'openapi.json');
// Indented, so a finding's line number points at one field.
writeFileSync(file, JSON.stringify(buildOpenApiDocument(), null, 2));
const bin = (name) => join(ROOT, 'node_modules/.bin', name);
const problems = [];
try {
  const redocly = spawnSync(bin('redocly'), ['lint', file, '--config', join(ROOT, 'tools/openapi/redocly.yaml'), '--format', 'json'], { encoding: 'utf8', cwd: ROOT });
  const report = JSON.parse(redocly.stdout.slice(redocly.stdout.indexOf('{')) || 'null');
  if (!report) throw new Error(`redocly lint printed no report (exit ${redocly.status}): ${redocly.stderr}`);
  for (const problem of report.problems) problems.push(`redocly ${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer ?? '?'}`);
  console.error(`redocly lint: ${report.totals.errors} error(s), ${report.totals.warnings} warning(s)`);

  const spectral = spawnSync(bin('spectral'), ['lint', file, '--ruleset', join(ROOT, 'tools/openapi/spectral.yaml'), '--format', 'json', '--fail-severity', 'hint', '--quiet'], { encoding: 'utf8', cwd: ROOT });
  const results = JSON.parse(spectral.stdout.trim() || '[]');
  if (spectral.status !== 0 && results.length === 0) throw new Error(`spectral lint failed (exit ${spectral.status}): ${spectral.stderr}`);
  const severities = ['error', 'warning', 'info', 'hint'];
  for (const result of results) problems.push(`spectral ${severities[result.severity]} ${result.code}: ${result.message} at /${result.path.join('/')}`);
  console.error(`spectral lint (spectral:oas): ${results.length} finding(s)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`  ${problem}`);
  console.error(`\nopenapi lint: ${problems.length} finding(s); /openapi.json is what client generators read: fix the document (apps/gateway/src/openapi), not the rules`);
  process.exit(1);
}
console.error('openapi lint: clean');
