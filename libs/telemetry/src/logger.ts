import { currentTraceIds } from './tracing';

type Level = 'error' | 'warn' | 'info' | 'debug' | 'verbose';
const SEVERITY: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3, verbose: 4 };

/** `json` (deployed: one object per line for the log pipeline) or `pretty` (a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/**
 * One JSON object per line on stdout, carrying the active trace id; with LOG_FORMAT=pretty
 * (what `npm start` uses) one readable line instead. Shaped to satisfy Nest's
 * LoggerService structurally, so it is the logger of every app without this library
 * depending on Nest.
 */
export class JsonLogger {
  private readonly threshold: number;

  constructor(
    private readonly service: string,
    level: string = process.env.LOG_LEVEL ?? 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(line),
    private readonly format: LogFormat = process.env.LOG_FORMAT === 'pretty' ? 'pretty' : 'json',
  ) {
    this.threshold = SEVERITY[level as Level] ?? SEVERITY.info;
  }

  log(message: unknown, ...rest: unknown[]): void { this.emit('info', message, rest); }
  error(message: unknown, ...rest: unknown[]): void { this.emit('error', message, rest); }
  warn(message: unknown, ...rest: unknown[]): void { this.emit('warn', message, rest); }
  debug(message: unknown, ...rest: unknown[]): void { this.emit('debug', message, rest); }
  verbose(message: unknown, ...rest: unknown[]): void { this.emit('verbose', message, rest); }

  /** Structured fields beside the message: `logger.info('relayed', { count })`. */
  info(message: string, fields: Record<string, unknown> = {}): void { this.emit('info', message, [], fields); }

  private emit(level: Level, message: unknown, rest: unknown[], fields: Record<string, unknown> = {}): void {
    if (SEVERITY[level] > this.threshold) return;
    // Nest passes the context (a class name) last, and for errors a stack before it.
    const contextName = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = level === 'error' && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    const entry: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      service: this.service,
      ...(contextName ? { context: contextName } : {}),
      msg: message instanceof Error ? message.message : message,
      ...(message instanceof Error ? { stack: message.stack } : {}),
      ...(stack ? { stack } : {}),
      ...fields,
      ...currentTraceIds(),
    };
    this.write(this.format === 'pretty' ? prettyLine(entry) : `${JSON.stringify(entry)}\n`);
  }
}

/** `12:04:05 WARN  gateway  message  key=value …` (the stack, if any, on the lines below). */
function prettyLine({ time, level, service, msg, stack, context: _context, trace_id: _trace, span_id: _span, ...fields }: Record<string, unknown>): string {
  const extra = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const head = [String(time).slice(11, 19), String(level).toUpperCase().padEnd(5), String(service).padEnd(16), String(msg), ...extra].join(' ');
  return `${head}\n${stack ? `${String(stack)}\n` : ''}`;
}
