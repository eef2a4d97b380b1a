/** Injection token of the WebhookConfig. */
export const WEBHOOK_CONFIG = Symbol('WEBHOOK_CONFIG');
