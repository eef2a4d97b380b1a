/**
 * recur: the developer's command line (docs/cli.md). It calls the `/v1` API with an API key
 * through @recur/node, as an integrator's program does; `recur-admin` is the operator's tool.
 *
 *   recur listen --forward-to http://localhost:3000/hooks [--events invoice.paid,customer.created]
 *   recur trigger invoice.paid
 *   recur events tail [--type invoice.paid]
 */
import { parseArgs } from 'node:util';
import { type Event, Recur, RecurError } from '@recur/node';
import { DEFAULT_WINDOW_SECONDS } from './event-cursor';
import { followEvents, formatCreated, forward, forwardLine, newSessionSecret } from './listen';
import { FIXTURES, trigger } from './trigger';

/** Every event type: `satisfies` fails the build when the SDK's generated types add or drop one. */
const EVENT_TYPES = Object.keys({
  'customer.created': true, 'customer.updated': true, 'customer.deleted': true,
  'invoice.created': true, 'invoice.paid': true, 'invoice.payment_failed': true, 'invoice.voided': true, 'invoice.refunded': true, 'invoice.dunning_retry': true,
  'credit_note.created': true,
  'subscription.created': true, 'subscription.updated': true, 'subscription.activated': true, 'subscription.paused': true, 'subscription.resumed': true,
  'subscription.past_due': true, 'subscription.completed': true, 'subscription.cancelled': true, 'subscription.reactivated': true,
  'wallet.topped_up': true, 'wallet.low_balance': true, 'wallet.auto_recharge': true,
  'usage.threshold_reached': true,
} satisfies Record<Event['type'], true>);

const DEFAULT_BASE_URL = 'http://localhost:8080';
const DEFAULT_INTERVAL_MS = 1000;
const TRIGGER_WAIT_MS = 30_000;

const COMMON = `Every command takes --api-key KEY (else RECUR_API_KEY; a recur_test_sk_… key for the sandbox) and
--base-url URL (else RECUR_BASE_URL, else ${DEFAULT_BASE_URL}).
Flags take their value as --flag VALUE or --flag=VALUE; --help prints this.`;

const USAGE = `usage:
  recur listen --forward-to URL [--events TYPE,TYPE] [--secret whsec_…] [--interval MS] [--window SECONDS]
      forwards each event of the account recorded from now on to URL, signed as Recur's webhooks are,
      with the signing secret it prints at start (new each session unless --secret gives one)
  recur trigger EVENT_TYPE
      makes the sandbox resources that cause a real EVENT_TYPE event (recur trigger --help lists them)
  recur events tail [--type TYPE] [--interval MS] [--window SECONDS]
      prints each event of the account recorded from now on, one line each

${COMMON}`;

const TRIGGER_USAGE = (): string => `usage: recur trigger EVENT_TYPE

Makes, with your sandbox key, the resources that cause a real EVENT_TYPE event, prints each, and
waits until the events API shows the event (up to ${TRIGGER_WAIT_MS / 1000} s). It can cause:

${Object.entries(FIXTURES).map(([type, fixture]) => `  ${type.padEnd(24)} ${fixture.description}`).join('\n')}

${COMMON}`;

/** A usage mistake: the message and the usage go to stderr, exit code 2. */
export class UsageError extends Error {
  constructor(message: string, readonly usage: string = USAGE) {
    super(message);
  }
}

/** What `--help` asks for: the usage on stdout, exit code 0. */
class HelpRequested extends Error {
  constructor(readonly usage: string) {
    super('help');
  }
}

export interface Io {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** Aborted to stop `listen` and `events tail` (Ctrl-C). */
  signal: AbortSignal;
}

interface Command {
  usage: string;
  flags: Record<string, { type: 'string' }>;
  /** How many positional arguments it takes, and what they are called. */
  positional?: string;
  run(values: Record<string, string | undefined>, positional: string | undefined, io: Io): Promise<void>;
}

const CLIENT_FLAGS = { 'api-key': { type: 'string' }, 'base-url': { type: 'string' } } as const;
const FOLLOW_FLAGS = { interval: { type: 'string' }, window: { type: 'string' } } as const;

function client(values: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Recur {
  const key = values['api-key'] ?? env.RECUR_API_KEY;
  if (!key) throw new UsageError('an API key is required: --api-key or RECUR_API_KEY');
  return new Recur(key, { baseUrl: values['base-url'] ?? env.RECUR_BASE_URL ?? DEFAULT_BASE_URL });
}

function positiveInteger(values: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) <= 0) throw new UsageError(`--${name} must be a positive whole number`);
  return Number(raw);
}

function eventTypes(raw: string | undefined, flag: string): string[] {
  if (raw === undefined) return [];
  const types = raw.split(',').map((type) => type.trim()).filter(Boolean);
  const unknown = types.find((type) => !EVENT_TYPES.includes(type));
  if (types.length === 0 || unknown !== undefined) throw new UsageError(`--${flag}: '${unknown ?? raw}' is not an event type (${EVENT_TYPES.join(', ')})`);
  return [...new Set(types)];
}

const COMMANDS: Record<string, Command> = {
  listen: {
    usage: USAGE,
    flags: { ...CLIENT_FLAGS, ...FOLLOW_FLAGS, 'forward-to': { type: 'string' }, events: { type: 'string' }, secret: { type: 'string' } },
    async run(values, _positional, io) {
      const url = values['forward-to'];
      if (!url) throw new UsageError('--forward-to is required');
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`--forward-to must be an http(s) URL, not '${url}'`);
      if (values.secret !== undefined && !values.secret.startsWith('whsec_')) throw new UsageError('--secret must be a whsec_… secret');
      const types = eventTypes(values.events, 'events');
      const recur = client(values, io.env);
      const secret = values.secret ?? newSessionSecret();
      await followEvents(
        recur,
        { intervalMs: positiveInteger(values, 'interval', DEFAULT_INTERVAL_MS), windowSeconds: positiveInteger(values, 'window', DEFAULT_WINDOW_SECONDS), types, signal: io.signal, warn: io.err },
        async (event) => io.out(forwardLine(event, url, await forward(event, url, secret))),
        () => {
          io.out(`Ready! Your webhook signing secret is ${secret} (^C to quit)`);
          io.out(`Forwarding ${types.length > 0 ? types.join(', ') : 'every event type'} to ${url}`);
        },
      );
    },
  },
  trigger: {
    usage: TRIGGER_USAGE(),
    flags: { ...CLIENT_FLAGS },
    positional: 'EVENT_TYPE',
    async run(values, type, io) {
      if (!type || !FIXTURES[type]) throw new UsageError(`recur trigger cannot cause '${type}'`, TRIGGER_USAGE());
      // Its fixtures are real resources, and a live payment method would be charged for real.
      if ((values['api-key'] ?? io.env.RECUR_API_KEY ?? '').startsWith('recur_live_')) throw new UsageError('recur trigger works in the sandbox only: use a recur_test_sk_… key', TRIGGER_USAGE());
      const recur = client(values, io.env);
      io.out(`Setting up the fixture for ${type}`);
      const result = await trigger(recur, type, (made) => io.out(`  made ${made.object.padEnd(15)} ${made.id}${made.note ? `  (${made.note})` : ''}`), TRIGGER_WAIT_MS);
      if (!result.event) throw new Error(`no ${type} event about ${result.resource} within ${TRIGGER_WAIT_MS / 1000} s`);
      io.out(`Trigger succeeded: ${result.event.id} ${type} about ${result.resource}`);
    },
  },
  'events tail': {
    usage: USAGE,
    flags: { ...CLIENT_FLAGS, ...FOLLOW_FLAGS, type: { type: 'string' } },
    async run(values, _positional, io) {
      const types = eventTypes(values.type, 'type');
      if (types.length > 1) throw new UsageError('--type takes one event type');
      const recur = client(values, io.env);
      await followEvents(
        recur,
        { intervalMs: positiveInteger(values, 'interval', DEFAULT_INTERVAL_MS), windowSeconds: positiveInteger(values, 'window', DEFAULT_WINDOW_SECONDS), types, signal: io.signal, warn: io.err },
        async (event) => {
          const object = (event.data as { object?: { id?: string } }).object;
          io.out(`${formatCreated(event.created)}  ${event.type}  ${event.id}${object?.id ? `  ${object.id}` : ''}`);
        },
        () => io.out(`Tailing ${types[0] ?? 'every event type'} (^C to quit)`),
      );
    },
  },
};

/**
 * Reads the command line strictly (node:util parseArgs), as recur-admin does: a flag the command
 * does not take, a flag without its value or an extra argument is refused before anything is sent.
 */
function parse(argv: string[]): { command: Command; values: Record<string, string | undefined>; positional: string | undefined } {
  const [first, second] = argv;
  const name = first === 'events' ? `${first} ${second ?? ''}`.trim() : first;
  const command = name === undefined ? undefined : COMMANDS[name];
  const help = argv.includes('--help') || argv.includes('-h');
  if (!command) {
    if (help) throw new HelpRequested(USAGE);
    throw new UsageError(name === undefined ? 'a command is required' : `unknown command '${name}'`);
  }
  if (help) throw new HelpRequested(command.usage);
  const rest = argv.slice(name.split(' ').length);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, strict: true, allowPositionals: true, options: command.flags });
  } catch (error) {
    throw new UsageError((error as Error).message, command.usage);
  }
  const wanted = command.positional ? 1 : 0;
  if (parsed.positionals.length !== wanted) {
    throw new UsageError(command.positional ? `recur ${name} takes one ${command.positional}` : `unexpected argument '${parsed.positionals[0]}'`, command.usage);
  }
  return { command, values: parsed.values as Record<string, string | undefined>, positional: parsed.positionals[0] };
}

/** Runs one command; resolves with the exit code (0 done or stopped, 1 failed, 2 misused). */
export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const { command, values, positional } = parse(argv);
    await command.run(values, positional, io);
    return 0;
  } catch (error) {
    if (error instanceof HelpRequested) {
      io.out(error.usage);
      return 0;
    }
    if (error instanceof UsageError) {
      io.err(`${error.message}\n${error.usage}`);
      return 2;
    }
    const requestId = error instanceof RecurError && error.requestId ? ` (request ${error.requestId})` : '';
    io.err(`${(error as Error).message}${requestId}`);
    return 1;
  }
}

/** The `recur` command (bin/recur.js): Ctrl-C or SIGTERM stops `listen` and `events tail` cleanly. */
export function main(argv: string[]): void {
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  void run(argv, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    signal: stop.signal,
  }).then((code) => {
    process.exitCode = code;
    // Nothing else keeps the process: exit at once rather than wait for idle sockets.
    process.exit();
  });
}
