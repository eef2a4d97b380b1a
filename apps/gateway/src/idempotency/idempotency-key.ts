/** The `Idempotency-Key` header (docs/api/conventions.md#idempotency). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** 1 to 255 visible ASCII characters (a UUID, say); the OpenAPI document states the same. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
