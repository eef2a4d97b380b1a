import { createHash } from 'node:crypto';
import { randomBase62 } from '@recur/kernel';
import type { KeyKind } from '../http/request-context';

/**
 * Key format: `<prefix><32 base62 characters>` (~190 bits of randomness).
 *   recur_test_sk_…         secret key of the sandbox app
 *   recur_live_sk_…         secret key of the live app
 *   recur_publishable_sk_…  publishable key of either app (plan reads only)
 * Only the SHA-256 of a key is stored: keys are random, so a fast hash is enough to make
 * a stolen table useless, and lookups stay one indexed query.
 */
export const KEY_PREFIXES = {
  test: 'recur_test_sk_',
  live: 'recur_live_sk_',
  publishable: 'recur_publishable_sk_',
} as const;

export type KeyType = keyof typeof KEY_PREFIXES;
export type AppMode = 'sandbox' | 'live';

/**
 * How long a gateway serves a resolved key from memory before reading its row again: the bound
 * on how long a key revoked or rolled through another gateway replica keeps working on this one.
 * Through this one it stops at once; an expiry in the row (a roll with a grace period) is
 * honoured to the millisecond from memory.
 */
export const KEY_CACHE_TTL_MS = 5_000;

const KEY_BODY_LENGTH = 32;
const KEY_PATTERN = /^recur_(test|live|publishable)_sk_[0-9A-Za-z]{32}$/;

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateKey(type: KeyType): string {
  return `${KEY_PREFIXES[type]}${randomBase62(KEY_BODY_LENGTH)}`;
}

export function redactKey(key: string): string {
  return `${key.slice(0, key.length - KEY_BODY_LENGTH)}…${key.slice(-4)}`;
}

export function kindOf(type: KeyType): KeyKind {
  return type === 'publishable' ? 'publishable' : 'secret';
}

/** A live secret key belongs to the live app, a test key to the sandbox; publishable keys to either. */
export function keyFitsApp(type: KeyType, mode: AppMode): boolean {
  if (type === 'publishable') return true;
  return (type === 'live') === (mode === 'live');
}
