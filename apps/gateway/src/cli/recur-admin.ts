#!/usr/bin/env node
/**
 * recur-admin: the operator surface from a terminal. It calls the gateway's operator API
 * (`/operator/…`), so it works the same against `npm start` and a cluster.
 *
 *   recur-admin accounts create --name "Acme"
 *   recur-admin keys create --account acct_… --app sandbox|live --type test|live|publishable [--scope read_only] [--name …]
 *   recur-admin keys list --account acct_…
 *   recur-admin keys roll key_… [--expires-in SECONDS]
 *   recur-admin keys revoke key_…
 *   recur-admin users create --account acct_… --email you@example.com [--password …]
 *
 * RECUR_URL (default http://127.0.0.1:8080) and RECUR_OPERATOR_TOKEN (default: the token
 * `npm start` keeps in .data/operator-token) say where and as whom.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const USAGE = `usage:
  recur-admin accounts create --name NAME
  recur-admin keys create --account ACCOUNT --app sandbox|live --type test|live|publishable [--scope full|read_only] [--name NAME]
  recur-admin keys list --account ACCOUNT
  recur-admin keys roll KEY [--expires-in SECONDS]
  recur-admin keys revoke KEY
  recur-admin users create --account ACCOUNT --email EMAIL [--password PASSWORD]   (a developer portal sign-in; without --password one is generated and printed once)`;

function options(args: string[]): { positional: string[]; flags: Record<string, string> } {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith('--')) flags[args[i].slice(2)] = args[++i] ?? '';
    else positional.push(args[i]);
  }
  return { positional, flags };
}

function token(): string {
  if (process.env.RECUR_OPERATOR_TOKEN) return process.env.RECUR_OPERATOR_TOKEN;
  const local = join(process.env.RECUR_DATA_DIR ?? join(process.cwd(), '.data'), 'operator-token');
  if (existsSync(local)) return readFileSync(local, 'utf8').trim();
  throw new Error('set RECUR_OPERATOR_TOKEN (or run from the folder where npm start keeps .data/)');
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const base = process.env.RECUR_URL ?? 'http://127.0.0.1:8080';
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${response.status}: ${JSON.stringify(json)}`);
  return json;
}

function required(flags: Record<string, string>, name: string): string {
  if (!flags[name]) throw new Error(`--${name} is required\n${USAGE}`);
  return flags[name];
}

export async function runAdmin(argv: string[]): Promise<unknown> {
  const [resource, verb, ...rest] = argv;
  const { positional, flags } = options(rest);
  switch (`${resource} ${verb}`) {
    case 'accounts create':
      return call('POST', '/operator/accounts', { name: required(flags, 'name') });
    case 'keys create':
      return call('POST', `/operator/accounts/${required(flags, 'account')}/keys`, {
        app: required(flags, 'app'),
        type: required(flags, 'type'),
        ...(flags.scope ? { scope: flags.scope } : {}),
        ...(flags.name ? { name: flags.name } : {}),
      });
    case 'keys list':
      return call('GET', `/operator/accounts/${required(flags, 'account')}/keys`);
    case 'keys roll':
      return call('POST', `/operator/keys/${positional[0]}/roll`, flags['expires-in'] ? { expires_in_seconds: Number(flags['expires-in']) } : {});
    case 'keys revoke':
      return call('POST', `/operator/keys/${positional[0]}/revoke`);
    case 'users create':
      return call('POST', `/operator/accounts/${required(flags, 'account')}/users`, {
        email: required(flags, 'email'),
        ...(flags.password ? { password: flags.password } : {}),
      });
    default:
      throw new Error(USAGE);
  }
}

/** Runs one command and prints its JSON answer (apps/gateway/bin/recur-admin.js calls this). */
export function main(argv: string[]): void {
  runAdmin(argv)
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((error: Error) => {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    });
}

if (require.main === module) main(process.argv.slice(2));
