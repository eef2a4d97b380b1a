import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const FUZZ_DIR = join(__dirname, '..', '..', '..', 'tools', 'fuzz');
const REQUIREMENTS = join(FUZZ_DIR, 'requirements.txt');

/**
 * The pinned schemathesis in its own virtualenv under ~/.cache/recur, installed from PyPI on
 * first use (about a minute) and reused while the pin is unchanged.
 */
export function ensureSchemathesis(): string {
  const pin = readFileSync(REQUIREMENTS, 'utf8').match(/^schemathesis==([\w.]+)$/m)?.[1];
  if (!pin) throw new Error(`no schemathesis pin in ${REQUIREMENTS}`);
  const venv = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'recur', `schemathesis-${pin}`);
  const binary = join(venv, 'bin', 'schemathesis');
  if (existsSync(binary)) return binary;
  mkdirSync(venv, { recursive: true });
  for (const [command, args] of [
    ['python3', ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', REQUIREMENTS]],
  ] as const) {
    const result = spawnSync(command, args, { stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
  }
  return binary;
}

export interface FuzzRun {
  exitCode: number;
  output: string;
}

/**
 * The gateway's own OpenAPI document, less the routes whose capability has not landed
 * (`x-recur-availability: planned`: they answer 501 by design), written where schemathesis reads it.
 */
export async function implementedApiDocument(baseUrl: string, dir: string): Promise<{ path: string; operations: number }> {
  const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { 'x-recur-availability'?: string; parameters?: { name: string }[] }>>;
  };
  let operations = 0;
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (operation['x-recur-availability'] === 'planned') delete methods[method];
      else operations += 1;
      // Generated Idempotency-Keys repeat across unrelated requests, and a replay rightly answers
      // the first request's resource, which a later step may have deleted: the stateful checks
      // would call that a lost resource. Keys are tested on their own (door and idempotency tests).
      if (operation.parameters) operation.parameters = operation.parameters.filter((parameter) => parameter.name !== 'Idempotency-Key');
    }
    if (Object.keys(methods).length === 0) delete document.paths[path];
  }
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  return { path: file, operations };
}

/** Runs schemathesis against a live gateway with the given document and collects its output. */
export async function runSchemathesis(options: { document: string; baseUrl: string; key: string; maxExamples: number; maxTimeSeconds: number; seed: number; reportDir: string }): Promise<FuzzRun> {
  const binary = ensureSchemathesis();
  const args = [
    '--config-file', join(FUZZ_DIR, 'schemathesis.toml'),
    'run', options.document,
    '--url', options.baseUrl,
    '-H', `x-api-key: ${options.key}`,
    '--checks', 'all',
    // DELETE archives plans and add-ons and soft-deletes customers, which stay retrievable
    // by design (the spec: "soft delete", "archive"); schemathesis would call that a use after free.
    '--exclude-checks', 'use_after_free',
    '--phases', 'examples,coverage,fuzzing,stateful',
    '--max-examples', String(options.maxExamples),
    '--max-time', String(options.maxTimeSeconds),
    '--seed', String(options.seed),
    // One worker: with two threads, CPython 3.11 once crashed compiling schemathesis's coverage
    // code ("AST constructor recursion depth mismatch"), a tool error rather than a finding.
    '--workers', '1',
    '--request-timeout', '30',
    '--report', 'junit',
    '--report-dir', options.reportDir,
    '--output-truncate', 'false',
  ];
  const child = spawn(binary, args, { env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_HOOKS: '' } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? 1)));
  return { exitCode, output };
}
