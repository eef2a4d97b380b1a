import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from one buffer refilled 4 KiB at a time, each byte used once: a call to
 * the system's generator per id cost more than the rest of a batch ingest (docs/performance.md).
 * Node's own randomUUID keeps such a cache too.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;
function randomByte(): number {
  if (poolOffset === pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/** Uniform random base62 text; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** Resource id prefixes, one per resource type (DESIGN.md: ids are opaque, type-prefixed). */
export type IdPrefix =
  | 'acct' | 'app' | 'key' | 'cus' | 'plan' | 'sub' | 'in' | 'il' | 'cn' | 'we' | 'evt' | 'req' | 'whd' | 'wha'
  | 'pc' | 'addon' | 'coupon' | 'promo' | 'clock' | 'bjob' | 'ur' | 'ualert' | 'pay' | 'mail'
  | 'usr' | 'sess' | 'slink' | 'chk' | 'wal' | 'wtx' | 'wtu' | 're' | 'pm' | 'txr' | 'cbtx';

/** A new id such as `cus_4f9XkQ2mZ8aBcD1eF3gH5jKl`: 24 random base62 characters (~143 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`);
}
