import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * openapi-generator-cli from Maven Central (org.openapitools:openapi-generator-cli), pinned to the
 * version the npm wrapper @openapitools/openapi-generator-cli fetched in 2026-11: 7.23.0 makes an
 * object written `type: [object, null]` a required model (the client raised on `discount: null`
 * after the server had created the subscription); 7.25.0 reads it as optional. The older one is
 * the stricter test of the document.
 */
export const OPENAPI_GENERATOR_VERSION = '7.23.0';
const PYTHON_REQUIREMENTS = join(__dirname, '..', '..', '..', 'tools', 'openapi', 'python-client-requirements.txt');
const cacheDir = () => join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'recur');

function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** The generator's jar under ~/.cache/recur, copied from Maven Central by Maven on first use and reused. */
export function ensureOpenApiGenerator(): string {
  const dir = join(cacheDir(), 'openapi-generator');
  const jar = join(dir, `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
  if (existsSync(jar)) return jar;
  mkdirSync(dir, { recursive: true });
  run('mvn', ['-q', '-B', 'dependency:copy', `-Dartifact=org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}`, `-DoutputDirectory=${dir}`]);
  return jar;
}

/** A virtualenv with what the generated Python client imports, pinned; reused while the pins are unchanged. */
export function ensurePythonClientEnvironment(): string {
  const pins = readFileSync(PYTHON_REQUIREMENTS, 'utf8');
  const venv = join(cacheDir(), `python-client-${createHash('sha256').update(pins).digest('hex').slice(0, 12)}`);
  const python = join(venv, 'bin', 'python');
  if (existsSync(join(venv, '.complete'))) return python;
  rmSync(venv, { recursive: true, force: true });
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '-r', PYTHON_REQUIREMENTS]);
  run('touch', [join(venv, '.complete')]);
  return python;
}

/** Generates the Python client of `document` (a file) into `outputDir` as package `packageName`; the generator's log. */
export function generatePythonClient(document: string, outputDir: string, packageName: string): string {
  const jar = ensureOpenApiGenerator();
  return run('java', ['-jar', jar, 'generate', '-g', 'python', '-i', document, '-o', outputDir, '--package-name', packageName]);
}

/** Runs `script` with the pinned Python environment and the generated package on its path; its standard output. */
export function runPython(script: string, packageDir: string, env: Record<string, string>): string {
  return run(ensurePythonClientEnvironment(), [script], { env: { ...process.env, ...env, PYTHONPATH: packageDir } });
}
