import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../endpoints/url-policy';

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string;
}

export const RESPONSE_EXCERPT_MAX = 1024;

/** Resolves like dns.lookup but refuses non-public addresses (re-checked on every delivery). */
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
 * POSTs one delivery. The body is sent byte for byte as signed. The whole exchange
 * (connect, send, answer) must finish within the timeout, else the attempt fails.
 * Unless private URLs are allowed, a non-public address is refused before anything is
 * sent: a name by the lookup above, an IP literal here (Node never calls `lookup` for one).
 */
export function sendDelivery(url: string, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean): Promise<SendResult> {
  const started = performance.now();
  const target = new URL(url);
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return Promise.resolve({ statusCode: null, error: `${literal} is a non-public address`, durationMs: Math.round(performance.now() - started), responseExcerpt: '' });
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Recur-Webhooks/1.0' },
        lookup: allowPrivate ? undefined : publicOnlyLookup,
      },
      (response) => {
        let excerpt = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (excerpt.length < RESPONSE_EXCERPT_MAX) excerpt += chunk.slice(0, RESPONSE_EXCERPT_MAX - excerpt.length);
        });
        response.on('end', () => finish({ statusCode: response.statusCode ?? null, error: null, responseExcerpt: excerpt }));
        response.on('error', (error) => finish({ statusCode: response.statusCode ?? null, error: error.message, responseExcerpt: excerpt }));
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${timeoutMs} ms`, responseExcerpt: '' });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish({ statusCode: null, error: error.message, responseExcerpt: '' }));
    req.end(body);
  });
}
