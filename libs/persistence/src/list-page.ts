import { pageCursor, pageInfo, unknownCursor, type Page, type PageInfo } from '@recur/kernel';

export type SortDirection = 'asc' | 'desc';

/**
 * A list's total order, most significant key first, in Prisma's `orderBy` shape:
 * `[{ createdAt: 'desc' }, { id: 'desc' }]`. Its last key must be unique (the id), so every row
 * has one place and a cursor names a position no insert can shift.
 */
export type ListOrder = readonly Readonly<Record<string, SortDirection>>[];

/** The newest-first order of most lists (an index on `(tenant…, created_at DESC, id DESC)` serves it). */
export const NEWEST_FIRST: ListOrder = [{ createdAt: 'desc' }, { id: 'desc' }];

/** Oldest first, for lists read in the order they were built (a plan's price components). */
export const OLDEST_FIRST: ListOrder = [{ createdAt: 'asc' }, { id: 'asc' }];

/** One read of rows, as a Prisma model delegate's `findMany` takes it. */
export interface ListRead<Where> {
  where: Where;
  orderBy: Record<string, SortDirection>[];
  skip: number;
  take: number;
}

/** What readListPage needs of a list: its filter and order, and how to read and count rows. */
export interface ListSource<Row, Where> {
  /** The object's name in errors (`No such customer: '…'`). */
  resource: string;
  /** The list's filter, tenant included. */
  where: Where;
  /**
   * Which ids a cursor may name: the tenant (and parent, if any) alone, not the list's other
   * filters, so an object that stopped matching a filter mid-walk still marks its position.
   * Defaults to `where`.
   */
  cursorScope?: Partial<Where>;
  order: ListOrder;
  findMany(read: ListRead<Where>): Promise<Row[]>;
  count(query: { where: Where }): Promise<number>;
}

const keyOf = (entry: Readonly<Record<string, SortDirection>>): [string, SortDirection] => {
  const [pair] = Object.entries(entry);
  if (pair === undefined) throw new TypeError('a list order entry names one key');
  return pair;
};

const flip = (direction: SortDirection): SortDirection => (direction === 'asc' ? 'desc' : 'asc');

/**
 * The rows strictly after `cursor` in `order` (a lexicographic comparison spelled for Prisma:
 * `k1 > v1 OR (k1 = v1 AND k2 > v2) …`), plus a redundant bound on the first key (`k1 >= v1`) so
 * the planner scans the list's index from the cursor instead of filtering the whole range.
 */
function afterCursor(order: readonly [string, SortDirection][], cursor: Record<string, unknown>): Record<string, unknown> {
  const beyond = (direction: SortDirection) => (direction === 'desc' ? 'lt' : 'gt');
  const alternatives = order.map(([key, direction], index) => ({
    ...Object.fromEntries(order.slice(0, index).map(([equalKey]) => [equalKey, cursor[equalKey]])),
    [key]: { [beyond(direction)]: cursor[key] },
  }));
  const [firstKey, firstDirection] = order[0]!;
  return { AND: [{ [firstKey]: { [firstDirection === 'desc' ? 'lte' : 'gte']: cursor[firstKey] } }, { OR: alternatives }] };
}

/**
 * One page of a list, by offset or by keyset cursor (docs/development.md#list-paging): the shared
 * reading of `recur.common.v1.PageRequest` every List RPC answers with.
 *
 * - offset: `skip`/`take` as before; `hasMore` from the total.
 * - `startingAfter`: the `limit` rows after the cursor row in list order; `hasMore` says more
 *   follow (read as `limit + 1`).
 * - `endingBefore`: the `limit` rows just before it, read in the reverse order and turned back,
 *   so a page is always in list order; `hasMore` says more precede it.
 *
 * A cursor is a position, not an offset: rows inserted meanwhile neither repeat nor push rows off
 * a page. An id that names nothing in `cursorScope` is a 400 naming the parameter (unknownCursor).
 * The answer echoes the cursor (PageInfo.cursor) so the gateway can tell an older service that
 * ignored it. `total` stays the count of the whole filter (a second read, not in the same snapshot).
 */
export async function readListPage<Row extends object, Where>(page: Page, source: ListSource<Row, Where>): Promise<{ rows: Row[]; page: PageInfo }> {
  const order = source.order.map(keyOf);
  const orderBy = (keys: readonly [string, SortDirection][]) => keys.map(([key, direction]) => ({ [key]: direction }));
  const cursor = pageCursor(page);
  if (cursor === undefined) {
    const [rows, total] = await Promise.all([
      source.findMany({ where: source.where, orderBy: orderBy(order), skip: page.offset, take: page.limit }),
      source.count({ where: source.where }),
    ]);
    return { rows, page: pageInfo(page, rows.length, total) };
  }
  const scope = source.cursorScope ?? source.where;
  // Spelled with AND so the id cannot be overridden by, or override, the scope's own keys.
  const [cursorRow] = await source.findMany({ where: { AND: [scope, { id: cursor.id }] } as Where, orderBy: [], skip: 0, take: 1 });
  if (cursorRow === undefined) throw unknownCursor(source.resource, cursor);
  const position = cursorRow as Record<string, unknown>;
  const forward = cursor.param === 'starting_after';
  const travel = forward ? order : order.map(([key, direction]): [string, SortDirection] => [key, flip(direction)]);
  const where = { AND: [source.where, afterCursor(travel, position)] } as Where;
  const [read, total] = await Promise.all([
    source.findMany({ where, orderBy: orderBy(travel), skip: 0, take: page.limit + 1 }),
    source.count({ where: source.where }),
  ]);
  const hasMore = read.length > page.limit;
  const window = read.slice(0, page.limit);
  return { rows: forward ? window : window.reverse(), page: { total, hasMore, cursor: cursor.id } };
}
