/** Field rules of a customer, shared by the gateway's request validation and the service. */
export const CUSTOMER_NAME_MAX = 256;
export const CUSTOMER_EMAIL_MAX = 320;
/** A pragmatic address check (local@domain.tld), the same one the gateway applies. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
