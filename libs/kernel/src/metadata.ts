import { invalidArgument } from './errors';

/** Metadata limits, as Stripe's: 50 keys, keys up to 40 characters, values up to 500. */
export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_VALUE_MAX = 500;

export type Metadata = Record<string, string>;

/** Validates integrator metadata; the param names the offending key (`metadata[plan]`). */
export function checkMetadata(metadata: Metadata, param = 'metadata'): Metadata {
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_MAX_KEYS) throw invalidArgument(param, `metadata may hold at most ${METADATA_MAX_KEYS} keys`);
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > METADATA_KEY_MAX) {
      throw invalidArgument(`${param}[${key}]`, `metadata keys must be 1 to ${METADATA_KEY_MAX} characters`);
    }
    if (typeof value !== 'string' || value.length > METADATA_VALUE_MAX) {
      throw invalidArgument(`${param}[${key}]`, `metadata values must be strings of at most ${METADATA_VALUE_MAX} characters`);
    }
  }
  return metadata;
}

/** Stripe's merge rule for updates: given keys are set, a key given an empty value is removed. */
export function mergeMetadata(current: Metadata, update: Metadata): Metadata {
  const merged: Metadata = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
