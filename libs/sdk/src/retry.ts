import { randomUUID } from 'node:crypto';
import { ConnectionError } from './errors';

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  maxRetries: number;
  /** The first backoff; each next one doubles, with jitter (default 500 ms). */
  initialDelayMs: number;
  /** The longest backoff, and the longest `Retry-After` honoured (default 20 s). */
  maxDelayMs: number;
  /** One attempt's time limit (default 60 s). */
  timeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 20_000, timeoutMs: 60_000 };

/** The statuses worth another attempt: rate limited, and the server's own failures (never stored against an Idempotency-Key). */
const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

/** A 409 that is only "the first request with this key is still running": the same request later gets its answer. */
async function isIdempotencyInProgress(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const body = (await response.clone().json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
  return body?.error?.code === 'idempotency_key_in_progress';
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), when the answer has one. */
export function retryAfterMs(response: Response | undefined, now = Date.now()): number | undefined {
  const value = response?.headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter: the n-th retry waits 50–100 % of initial·2ⁿ, capped. */
export function backoffMs(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt);
  return Math.round(ceiling * (0.5 + random() / 2));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A `fetch` that makes every call safe to retry and retries it: a POST without an
 * `Idempotency-Key` gets one (the same on every attempt, so a retry of a create that did run is
 * answered with what it created); an attempt that fails to connect or answers 429, 5xx or
 * 409 idempotency_key_in_progress is tried again after `Retry-After` when the answer says, else
 * after an exponential backoff, up to `maxRetries` times. The last answer is returned as it is.
 */
export function retryingFetch(policy: RetryPolicy, baseFetch: typeof fetch = globalThis.fetch): (input: Request) => Promise<Response> {
  return async (request: Request) => {
    const headers = new Headers(request.headers);
    if (request.method === 'POST' && !headers.has('idempotency-key')) headers.set('Idempotency-Key', `node-${randomUUID()}`);
    // Read once: every attempt sends the same bytes.
    const bytes = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    const body = bytes && bytes.byteLength > 0 ? bytes : undefined;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= policy.maxRetries;
      let response: Response | undefined;
      try {
        const signal = request.signal ? AbortSignal.any([request.signal, AbortSignal.timeout(policy.timeoutMs)]) : AbortSignal.timeout(policy.timeoutMs);
        response = await baseFetch(new Request(request.url, { method: request.method, headers, body, signal }));
      } catch (error) {
        // The caller's own abort is not retried.
        if (request.signal?.aborted) throw error;
        if (last) throw new ConnectionError(`${request.method} ${new URL(request.url).pathname}: no answer after ${attempt + 1} attempt(s): ${(error as Error).message}`, error);
      }
      if (response && (last || !(RETRIED_STATUSES.has(response.status) || (await isIdempotencyInProgress(response))))) return response;
      await response?.body?.cancel().catch(() => undefined);
      await sleep(Math.min(policy.maxDelayMs, retryAfterMs(response) ?? backoffMs(attempt, policy)));
    }
  };
}
