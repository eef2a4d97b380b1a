import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { Agent, request } from 'undici';
import { isPublicAddress } from '../endpoints/url-policy';

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string;
}

export const RESPONSE_EXCERPT_MAX = 1024;

/** Resolves like dns.lookup but refuses non-public addresses (re-checked on every new connection). */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as LookupAddress[];
    const allowed = list.filter((address) => isPublicAddress(address.address));
    if (allowed.length === 0) return callback(new Error(`${hostname} resolves to a non-public address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};

/**
 * The connection pools of the process, one per policy, kept alive between deliveries. undici
 * rather than `node:http`: a delivery is the dispatcher's hottest path, and with this
 * process's OpenTelemetry HTTP instrumentation loaded (it patches `node:http` only) a post cost
 * 180–200 µs of CPU through `node:http` and 92–107 µs through undici (docs/performance.md); the
 * delivery's span is the dispatcher's own (`withClientSpan`). A connection is only made through
 * the lookup above, so a name that turned private is refused before anything is sent on a new one.
 */
let publicAgent: Agent | undefined;
let anyAgent: Agent | undefined;
const agentFor = (allowPrivate: boolean): Agent =>
  allowPrivate ? (anyAgent ??= new Agent()) : (publicAgent ??= new Agent({ connect: { lookup: publicOnlyLookup } }));

/**
 * POSTs one delivery. The body is sent byte for byte as signed. The whole exchange
 * (connect, send, answer) must finish within the timeout, else the attempt fails.
 * Unless private URLs are allowed, a non-public address is refused before anything is
 * sent: a name by the lookup above, an IP literal here (Node never calls `lookup` for one).
 * Only the first RESPONSE_EXCERPT_MAX characters of the answer are kept.
 */
export async function sendDelivery(url: string, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = new URL(url);
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return { statusCode: null, error: `${literal} is a non-public address`, durationMs: elapsed(), responseExcerpt: '' };
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const timedOut = () => ({ statusCode: null, error: `no answer within ${timeoutMs} ms`, durationMs: elapsed(), responseExcerpt: '' });
  let statusCode: number | null = null;
  let excerpt = '';
  try {
    const response = await request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Recur-Webhooks/1.0' },
      body,
      dispatcher: agentFor(allowPrivate),
      signal: abort.signal,
    });
    statusCode = response.statusCode;
    // Read to the end (the connection is then free for the next delivery), keeping the start;
    // the decoder carries a character split between chunks over.
    const decoder = new StringDecoder('utf8');
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      if (excerpt.length < RESPONSE_EXCERPT_MAX) excerpt += decoder.write(chunk).slice(0, RESPONSE_EXCERPT_MAX - excerpt.length);
    }
    return { statusCode, error: null, durationMs: elapsed(), responseExcerpt: excerpt };
  } catch (error) {
    if (abort.signal.aborted) return timedOut();
    return { statusCode, error: (error as Error).message, durationMs: elapsed(), responseExcerpt: excerpt };
  } finally {
    clearTimeout(timer);
  }
}
