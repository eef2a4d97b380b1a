// @recur/node: Recur's Node.js client (docs/sdk.md).
export { Recur, type RecurOptions, SDK_VERSION } from './client';
export { ApiError, AuthenticationError, ConnectionError, type ErrorBody, type ErrorType, errorFromResponse, IdempotencyError, InvalidRequestError, PermissionError, RateLimitError, RecurError } from './errors';
export { type Page, type PageCursor, PageRequest } from './pagination';
export type { CreditNote, Customer, Event, Invoice, Payment, Plan, Refund, RequestOptions, Schemas, Subscription, Wallet, WebhookEndpoint } from './resources';
export { backoffMs, DEFAULT_RETRY_POLICY, retryAfterMs, type RetryPolicy } from './retry';
export type { components, paths, webhooks } from './generated/openapi';
// Webhook verification, the same code as @recur/webhooks.
export { computeSignature, constructEvent, DEFAULT_TOLERANCE_SECONDS, type RecurEvent, SIGNATURE_HEADER, signatureHeaders, TIMESTAMP_HEADER, type VerifyOptions, verifySignature, WebhookVerificationError } from '@recur/webhooks';
