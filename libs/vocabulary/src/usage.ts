/**
 * Usage metering's bounds (docs/api/usage.md): the gateway's door and the usage-metering service
 * check the same values.
 */

/** One record's quantity: a non-negative integer up to a billion units. */
export const USAGE_QUANTITY_MAX = 1_000_000_000;

/** A record's idempotency_key: 1–255 visible ASCII characters, unique per subscription. */
export const USAGE_IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const USAGE_IDEMPOTENCY_KEY_MAX = 255;

/** Records per `POST /v1/usage/batch`. */
export const USAGE_BATCH_MAX = 1000;

/**
 * How long after usage-metering learns that a subscription entered a new period it still takes
 * records dated in the previous one (late senders, retries after an outage).
 */
export const USAGE_GRACE_SECONDS = 3600;

/** How far ahead of the receiving clock a record's timestamp may lie (senders' clock skew). */
export const USAGE_FUTURE_SKEW_SECONDS = 300;

/** A usage limit per period: a non-negative integer up to 10^15 units. */
export const USAGE_LIMIT_MAX = 1_000_000_000_000_000;

/** The percentages of a limit that raise an alert and `usage.threshold_reached`, lowest first. */
export const USAGE_ALERT_THRESHOLDS = [80, 100] as const;
