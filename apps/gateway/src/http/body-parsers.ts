import { parse as parseForm } from 'node:querystring';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error';
import { payloadTooLarge } from './api-exception.filter';

/** Largest accepted JSON body (and the most Fastify reads of any body). */
export const BODY_LIMIT_BYTES = 256 * 1024;

/** Provider callbacks are verified over their exact bytes, whatever their content type. */
const RAW_BODY_PATHS = [{ prefix: '/callbacks', limit: 64 * 1024 }];
/** The pages that post forms: the payer pages, then the portals and the hosted checkout. */
const FORM_PATHS = [
  { prefix: '/sandbox/pay', limit: 8 * 1024 },
  { prefix: '/pay', limit: 8 * 1024 },
  { prefix: '/portal', limit: 16 * 1024 },
  { prefix: '/customer-portal', limit: 16 * 1024 },
  { prefix: '/buy', limit: 16 * 1024 },
];
/** The APIs whose bodies are JSON only. */
const JSON_API_PATHS = ['/v1', '/operator'];

/**
 * The gateway's one body parser, in place of Fastify's: what a body becomes depends on the path
 * and the media type, as it did with Express's parsers mounted per path.
 *   /callbacks            the bytes as received (a Buffer), any media type;
 *   a page's form post    urlencoded fields (repeated fields as arrays);
 *   application/json      the parsed JSON, anywhere: an object or an array (a bare `"text"` or
 *                         `1` is invalid JSON here, as strict JSON body parsers have it); empty is {};
 *   a body of another (or no) media type to the JSON APIs (/v1, /operator): 415
 *                         unsupported_media_type, which names the type it got (curl sends
 *                         application/x-www-form-urlencoded unless told otherwise; read as no
 *                         body, a JSON body would be answered "Missing required param");
 *   anything else         no body.
 * A body over its path's limit is 413; Fastify stops reading at BODY_LIMIT_BYTES.
 */
export function registerBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) => {
    try {
      done(null, parseBody(request.url, mediaType(request.headers['content-type']), body));
    } catch (error) {
      done(error as Error);
    }
  });
}

function parseBody(url: string, type: string, body: Buffer): unknown {
  const raw = RAW_BODY_PATHS.find(({ prefix }) => isUnder(url, prefix));
  if (raw) return within(body, raw.limit);
  const form = FORM_PATHS.find(({ prefix }) => isUnder(url, prefix));
  if (form && type === 'application/x-www-form-urlencoded') return parseForm(within(body, form.limit).toString('utf8'));
  if (type === 'application/json') return parseJson(within(body, BODY_LIMIT_BYTES).toString('utf8'));
  if (body.byteLength > 0 && JSON_API_PATHS.some((prefix) => isUnder(url, prefix))) throw unsupportedMediaType(type);
  return undefined;
}


const unsupportedMediaType = (type: string) =>
  new ApiError(
    415,
    'unsupported_media_type',
    `Send the request body as JSON with the header Content-Type: application/json (this request's Content-Type is ${type === '' ? 'missing' : type}).`,
  );

function parseJson(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return {};
  if (first !== '{' && first !== '[') throw invalidJson();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidJson();
  }
}

const invalidJson = () => new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');

function within(body: Buffer, limit: number): Buffer {
  if (body.byteLength > limit) throw payloadTooLarge();
  return body;
}

/** `application/json; charset=utf-8` → `application/json`. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}

/** A path at or under `prefix`, by whole segments (`/pay` covers `/pay/x`, not `/payments`). */
function isUnder(url: string, prefix: string): boolean {
  if (!url.toLowerCase().startsWith(prefix)) return false;
  const next = url[prefix.length];
  return next === undefined || next === '/' || next === '?';
}
