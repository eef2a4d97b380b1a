import { randomInt } from 'node:crypto';
import type { Event, Recur } from '@recur/node';
import { deliveryBody, signatureHeaders } from '@recur/webhooks';
import { EventCursor } from './event-cursor';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A session's signing secret, shaped as an endpoint's: `whsec_` and 32 base62 characters. */
export const newSessionSecret = (): string => `whsec_${Array.from({ length: 32 }, () => BASE62[randomInt(BASE62.length)]).join('')}`;

/** One forward's time limit, as a delivery's (webhook-dispatch's default). */
const FORWARD_TIMEOUT_MS = 30_000;

export interface PollOptions {
  /** Milliseconds between reads of the events API. */
  intervalMs: number;
  windowSeconds: number;
  /** Only these types (none: every type). */
  types: string[];
  signal: AbortSignal;
  /** Where a failed read is reported; the loop reads again at the next interval. */
  warn: (line: string) => void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/**
 * Calls `handle` with each event recorded after it starts, oldest first, once each, until the
 * signal aborts. A single type is filtered by the API, several here.
 */
export async function followEvents(recur: Recur, options: PollOptions, handle: (event: Event) => Promise<void>, ready: () => void): Promise<void> {
  const cursor = new EventCursor(recur, { windowSeconds: options.windowSeconds, ...(options.types.length === 1 ? { type: options.types[0] } : {}) });
  await cursor.start();
  ready();
  const wanted = new Set(options.types);
  while (!options.signal.aborted) {
    try {
      for (const event of await cursor.poll()) {
        if (wanted.size === 0 || wanted.has(event.type)) await handle(event);
      }
    } catch (error) {
      options.warn(`reading events failed (${(error as Error).message}); reading again`);
    }
    await sleep(options.intervalMs, options.signal);
  }
}

export interface ForwardResult {
  status: number | null;
  error?: string;
  durationMs: number;
}

/** POSTs one event to `url` as webhook-dispatch delivers it: the same body bytes, signed with `secret`. */
export async function forward(event: Event, url: string, secret: string): Promise<ForwardResult> {
  const body = deliveryBody(event);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...signatureHeaders(secret, body), 'content-type': 'application/json', 'user-agent': 'Recur-Webhooks/1.0 (recur listen)' },
      body,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    return { status: response.status, durationMs: elapsed() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { status: null, error: cause?.code ?? cause?.message ?? (error as Error).message, durationMs: elapsed() };
  }
}

/** `2026-11-27 18:01:02` (UTC) of a unix-seconds `created`. */
export const formatCreated = (created: number): string => new Date(created * 1000).toISOString().replace('T', ' ').slice(0, 19);

/** The line printed for one forward. */
export function forwardLine(event: Event, url: string, result: ForwardResult): string {
  const answer = result.status === null ? `failed: ${result.error}` : `[${result.status}]`;
  return `${formatCreated(event.created)}  ${event.type}  ${event.id}  --> POST ${url} ${answer} ${result.durationMs} ms`;
}
