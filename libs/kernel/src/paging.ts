import { invalidArgument } from './errors';

/** List window bounds, shared by the gateway (HTTP 400) and every service (defence in depth). */
export const PAGE_LIMIT_DEFAULT = 10;
export const PAGE_LIMIT_MAX = 100;
export const PAGE_OFFSET_MAX = 10_000;

export interface Page {
  limit: number;
  offset: number;
}

/** Validates a requested window; an absent limit (0) means the default. Out of range is an error, never clamped. */
export function checkPage(limit: number | undefined, offset: number | undefined): Page {
  const effectiveLimit = limit === undefined || limit === 0 ? PAGE_LIMIT_DEFAULT : limit;
  const effectiveOffset = offset ?? 0;
  if (!Number.isInteger(effectiveLimit) || effectiveLimit < 1 || effectiveLimit > PAGE_LIMIT_MAX) {
    throw invalidArgument('limit', `limit must be an integer between 1 and ${PAGE_LIMIT_MAX}`);
  }
  if (!Number.isInteger(effectiveOffset) || effectiveOffset < 0 || effectiveOffset > PAGE_OFFSET_MAX) {
    throw invalidArgument('offset', `offset must be an integer between 0 and ${PAGE_OFFSET_MAX}`);
  }
  return { limit: effectiveLimit, offset: effectiveOffset };
}

/** What a list answer says of its window: the total and whether items follow it. */
export function pageInfo(page: Page, returned: number, total: number): { total: number; hasMore: boolean } {
  return { total, hasMore: page.offset + returned < total };
}
