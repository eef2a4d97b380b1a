import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Recur's webhook signature scheme:
 *   X-Recur-Timestamp: unix time in milliseconds, as a decimal string
 *   X-Recur-Signature: sha256=<lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed with the endpoint secret>
 * The body is signed exactly as sent; parsing and re-serialising it breaks the signature.
 */
export const SIGNATURE_HEADER = 'x-recur-signature';
export const TIMESTAMP_HEADER = 'x-recur-timestamp';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface RecurEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  created: number;
  livemode: boolean;
  data: Data;
}

export type WebhookErrorCode = 'missing_header' | 'invalid_signature' | 'timestamp_out_of_tolerance' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  constructor(readonly code: WebhookErrorCode, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * The body of a delivery: the specification's envelope, serialised once; these exact bytes are
 * signed and sent (webhook-dispatch's deliveries and `recur listen`'s forwards alike).
 */
export function deliveryBody(event: { id: string; type: string; created: number; livemode: boolean | null; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, created: event.created, livemode: event.livemode, data: event.data });
}

/** The hex signature of a payload: what the sender puts after `sha256=`. */
export function computeSignature(secret: string, timestamp: string, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** The two headers a sender attaches to a delivery of `rawBody` at `timestampMs`. */
export function signatureHeaders(secret: string, rawBody: string | Buffer, timestampMs: number = Date.now()): Record<'X-Recur-Signature' | 'X-Recur-Timestamp', string> {
  const timestamp = String(timestampMs);
  return { 'X-Recur-Signature': `sha256=${computeSignature(secret, timestamp, rawBody)}`, 'X-Recur-Timestamp': timestamp };
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

export interface VerifyOptions {
  /** Maximum age (and future skew) of the timestamp, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds (for tests). */
  now?: number;
}

/**
 * Checks a delivery's signature and timestamp. Throws WebhookVerificationError when the
 * headers are missing, the signature does not match (compared in constant time on buffers
 * of equal length), or the timestamp is older than the tolerance or as far in the future.
 */
export function verifySignature(rawBody: string | Buffer, headers: Headers, secret: string, options: VerifyOptions = {}): void {
  const timestamp = header(headers, TIMESTAMP_HEADER);
  const signature = header(headers, SIGNATURE_HEADER);
  if (!timestamp || !signature) throw new WebhookVerificationError('missing_header', `Missing ${!timestamp ? 'X-Recur-Timestamp' : 'X-Recur-Signature'} header.`);
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('invalid_signature', 'The timestamp is not a decimal number of milliseconds.');

  // The hex text is compared, not its decoded bytes: a hex decoder drops an odd last digit and
  // stops at the first non-hex one, so other spellings would decode to the same bytes.
  const expected = Buffer.from(computeSignature(secret, timestamp, rawBody));
  const received = Buffer.from(signature.replace(/^sha256=/, '').toLowerCase());
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    throw new WebhookVerificationError('invalid_signature', 'The signature does not match the body and secret.');
  }
  const toleranceMs = (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) * 1000;
  if (Math.abs((options.now ?? Date.now()) - Number(timestamp)) > toleranceMs) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', 'The timestamp is outside the tolerance; the delivery may be replayed.');
  }
}

/** Verifies a delivery and returns its parsed event. Pass the raw body, not a parsed object. */
export function constructEvent<Data = Record<string, unknown>>(rawBody: string | Buffer, headers: Headers, secret: string, options: VerifyOptions = {}): RecurEvent<Data> {
  verifySignature(rawBody, headers, secret, options);
  try {
    const event = JSON.parse(rawBody.toString()) as RecurEvent<Data>;
    if (typeof event.id !== 'string' || typeof event.type !== 'string') throw new Error('not an event');
    return event;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not a Recur event.');
  }
}
