import { DomainError, invalidArgument } from './errors';

/** List window bounds, shared by the gateway (HTTP 400) and every service (defence in depth). */
export const PAGE_LIMIT_DEFAULT = 10;
export const PAGE_LIMIT_MAX = 100;
export const PAGE_OFFSET_MAX = 10_000;

/**
 * A list window: `limit` items from `offset`, or — keyset paging — `limit` items after
 * `startingAfter` or before `endingBefore` (an object id), in the list's own order. A cursor
 * window has offset 0 and no bound (docs/api/conventions.md#pagination).
 */
export interface Page {
  limit: number;
  offset: number;
  startingAfter?: string;
  endingBefore?: string;
}

/** What a list answer says of its window (`recur.common.v1.PageInfo`). */
export interface PageInfo {
  total: number;
  hasMore: boolean;
  /** The cursor the window was read from, echoed so a caller can tell a service that ignored it. */
  cursor: string;
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

/**
 * Validates a requested window with its cursors (a `recur.common.v1.PageRequest`): at most one of
 * `startingAfter` / `endingBefore`, never with an offset. Empty strings are proto3's "not set".
 */
export function checkListPage(request: { limit?: number; offset?: number; startingAfter?: string; endingBefore?: string } | undefined): Page {
  const page = checkPage(request?.limit, request?.offset);
  const startingAfter = request?.startingAfter || undefined;
  const endingBefore = request?.endingBefore || undefined;
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw invalidArgument('ending_before', 'Received both starting_after and ending_before: pass only one');
  }
  const cursorParam = startingAfter !== undefined ? 'starting_after' : endingBefore !== undefined ? 'ending_before' : undefined;
  if (cursorParam !== undefined && page.offset !== 0) {
    throw invalidArgument('offset', `offset cannot be combined with ${cursorParam}: page by cursor or by offset`);
  }
  return { ...page, ...(startingAfter !== undefined ? { startingAfter } : {}), ...(endingBefore !== undefined ? { endingBefore } : {}) };
}

/** The cursor a window is read from, if any, and the request parameter that named it. */
export function pageCursor(page: Page): { id: string; param: 'starting_after' | 'ending_before' } | undefined {
  if (page.startingAfter !== undefined) return { id: page.startingAfter, param: 'starting_after' };
  if (page.endingBefore !== undefined) return { id: page.endingBefore, param: 'ending_before' };
  return undefined;
}

/**
 * A cursor that names no object of the list's type in the caller's tenant: a 400 naming the
 * parameter, as Stripe answers (`No such customer: 'cus_…'`, param `starting_after`).
 */
export function unknownCursor(resource: string, cursor: { id: string; param: string }): DomainError {
  return new DomainError('invalid_argument', 'resource_missing', `No such ${resource}: '${cursor.id}'`, cursor.param);
}

/** What an offset list answer says of its window: the total and whether items follow it. */
export function pageInfo(page: Page, returned: number, total: number): PageInfo {
  return { total, hasMore: page.offset + returned < total, cursor: '' };
}

/**
 * The window of a list held whole in memory (already in list order, `idOf` unique), by offset or by
 * cursor with the same rules as the keyset reads of `@recur/persistence` (readListPage).
 */
export function windowOf<T>(items: readonly T[], page: Page, resource: string, idOf: (item: T) => string): { data: T[]; page: PageInfo } {
  const cursor = pageCursor(page);
  if (cursor === undefined) {
    const data = items.slice(page.offset, page.offset + page.limit);
    return { data, page: pageInfo(page, data.length, items.length) };
  }
  const at = items.findIndex((item) => idOf(item) === cursor.id);
  if (at < 0) throw unknownCursor(resource, cursor);
  if (cursor.param === 'starting_after') {
    const data = items.slice(at + 1, at + 1 + page.limit);
    return { data, page: { total: items.length, hasMore: at + 1 + data.length < items.length, cursor: cursor.id } };
  }
  const from = Math.max(0, at - page.limit);
  return { data: items.slice(from, at), page: { total: items.length, hasMore: from > 0, cursor: cursor.id } };
}
