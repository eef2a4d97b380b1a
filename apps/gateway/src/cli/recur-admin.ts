#!/usr/bin/env node
/**
 * recur-admin: the operator surface from a terminal. It calls the gateway's operator API
 * (`/operator/…`, on its admin listener), so it works the same against `npm start` and a cluster
 * (through `kubectl port-forward` to the gateway's admin port).
 *
 *   recur-admin accounts create --name "Acme"
 *   recur-admin keys create --account acct_… --app sandbox|live --type test|live|publishable [--scope read_only] [--name …]
 *   recur-admin keys list --account acct_…
 *   recur-admin keys roll key_… [--expires-in SECONDS]
 *   recur-admin keys revoke key_…
 *   recur-admin users create --account acct_… --email you@example.com [--password …]
 *
 * RECUR_ADMIN_URL (default http://127.0.0.1:9464, the admin port of `npm start`) and RECUR_OPERATOR_TOKEN (default: the token
 * `npm start` keeps in .data/operator-token) say where and as whom.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage:
  recur-admin accounts create --name NAME
  recur-admin keys create --account ACCOUNT --app sandbox|live --type test|live|publishable [--scope full|read_only] [--name NAME]
  recur-admin keys list --account ACCOUNT
  recur-admin keys roll KEY [--expires-in SECONDS]
  recur-admin keys revoke KEY
  recur-admin users create --account ACCOUNT --email EMAIL [--password PASSWORD]   (a developer portal sign-in; without --password one is generated and printed once)

Flags take their value as --flag VALUE or --flag=VALUE; --help prints this.`;

/** A usage mistake: the message and the usage go to stderr, exit code 2. */
export class UsageError extends Error {}

/** What `--help` asks for: the usage on stdout, exit code 0. */
class HelpRequested extends Error {}

interface Command {
  /** Every flag the command takes (each with a value); any other is refused. */
  flags: string[];
  /** The one positional argument it takes (a key id), if any. */
  positional?: string;
  run(flags: Record<string, string | undefined>, positional: string | undefined): Promise<unknown>;
}

function token(): string {
  if (process.env.RECUR_OPERATOR_TOKEN) return process.env.RECUR_OPERATOR_TOKEN;
  const local = join(process.env.RECUR_DATA_DIR ?? join(process.cwd(), '.data'), 'operator-token');
  if (existsSync(local)) return readFileSync(local, 'utf8').trim();
  throw new Error('set RECUR_OPERATOR_TOKEN (or run from the folder where npm start keeps .data/)');
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const base = process.env.RECUR_ADMIN_URL ?? 'http://127.0.0.1:9464';
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${response.status}: ${JSON.stringify(json)}`);
  return json;
}

function required(flags: Record<string, string | undefined>, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

const COMMANDS: Record<string, Command> = {
  'accounts create': { flags: ['name'], run: (flags) => call('POST', '/operator/accounts', { name: required(flags, 'name') }) },
  'keys create': {
    flags: ['account', 'app', 'type', 'scope', 'name'],
    run: (flags) => call('POST', `/operator/accounts/${required(flags, 'account')}/keys`, {
      app: required(flags, 'app'),
      type: required(flags, 'type'),
      ...(flags.scope ? { scope: flags.scope } : {}),
      ...(flags.name ? { name: flags.name } : {}),
    }),
  },
  'keys list': { flags: ['account'], run: (flags) => call('GET', `/operator/accounts/${required(flags, 'account')}/keys`) },
  'keys roll': {
    flags: ['expires-in'],
    positional: 'KEY',
    run: (flags, key) => call('POST', `/operator/keys/${key}/roll`, flags['expires-in'] ? { expires_in_seconds: Number(flags['expires-in']) } : {}),
  },
  'keys revoke': { flags: [], positional: 'KEY', run: (_flags, key) => call('POST', `/operator/keys/${key}/revoke`) },
  'users create': {
    flags: ['account', 'email', 'password'],
    run: (flags) => call('POST', `/operator/accounts/${required(flags, 'account')}/users`, {
      email: required(flags, 'email'),
      ...(flags.password ? { password: flags.password } : {}),
    }),
  },
};

/**
 * Reads the command line strictly (node:util parseArgs): a flag the command does not take, a flag
 * without its value or an extra argument is refused before anything is sent, so a typo such as
 * `--scoep read_only` cannot silently create a full-scope key.
 */
function parse(argv: string[]): { command: Command; flags: Record<string, string | undefined>; positional: string | undefined } {
  if (argv.includes('--help') || argv.includes('-h')) throw new HelpRequested();
  const [resource, verb, ...rest] = argv;
  const command = COMMANDS[`${resource} ${verb}`];
  if (!command) throw new UsageError(resource === undefined ? 'a command is required' : `unknown command '${[resource, verb].filter(Boolean).join(' ')}'`);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, strict: true, allowPositionals: true, options: Object.fromEntries(command.flags.map((flag) => [flag, { type: 'string' as const }])) });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const wanted = command.positional ? 1 : 0;
  if (parsed.positionals.length !== wanted) {
    throw new UsageError(command.positional ? `${resource} ${verb} takes one ${command.positional}` : `unexpected argument '${parsed.positionals[0]}'`);
  }
  return { command, flags: parsed.values as Record<string, string | undefined>, positional: parsed.positionals[0] };
}

export async function runAdmin(argv: string[]): Promise<unknown> {
  const { command, flags, positional } = parse(argv);
  return command.run(flags, positional);
}

/** Runs one command and prints its JSON answer (apps/gateway/bin/recur-admin.js calls this). */
export function main(argv: string[]): void {
  runAdmin(argv)
    .then((result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`))
    .catch((error: Error) => {
      if (error instanceof HelpRequested) {
        process.stdout.write(`${USAGE}\n`);
        return;
      }
      process.stderr.write(error instanceof UsageError ? `${error.message}\n${USAGE}\n` : `${error.message}\n`);
      process.exitCode = error instanceof UsageError ? 2 : 1;
    });
}

if (require.main === module) main(process.argv.slice(2));
