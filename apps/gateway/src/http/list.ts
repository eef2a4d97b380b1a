import { Transform } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min, ValidateBy, type ValidationArguments } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_OFFSET_MAX, type PageInfo, windowOf } from '@recur/kernel';
import { ApiError } from './api-error';
import { PATH_ID_PATTERN } from './input-rules';
import { Optional } from './optional';

/**
 * A query integer is plain decimal digits: `0x10`, `1e2`, `+5`, ` 5` and an empty value stay
 * strings and fail validation (400) instead of being read as numbers.
 */
export const QueryInteger = () => Transform(({ value }) => (typeof value === 'string' && /^(0|[1-9][0-9]{0,8})$/.test(value) ? Number(value) : value));

type CursorParam = 'starting_after' | 'ending_before';

/** A rule of a cursor parameter against its siblings: `conflicts` names what must be absent beside it. */
const CursorAlone = (name: CursorParam, conflicts: 'offset' | 'starting_after', message: string): PropertyDecorator =>
  ValidateBy({
    name: `${name}Without_${conflicts}`,
    validator: { validate: (_value: unknown, args?: ValidationArguments) => (args?.object as Record<string, unknown> | undefined)?.[conflicts] === undefined, defaultMessage: () => message },
  });

const CURSOR_DESCRIPTION: Record<CursorParam, string> = {
  starting_after: 'An object id from a previous page: answers the page after it in list order (the next, older items). Not with `offset` or `ending_before`. An id that is not one of this list\'s objects in your account is a 400.',
  ending_before: 'An object id from a previous page: answers the page before it in list order (the previous, newer items), still newest first; `has_more` then says whether newer items remain. Not with `offset` or `starting_after`.',
};

/** A cursor query parameter: an object id (docs/api/conventions.md#pagination). */
const Cursor = (name: CursorParam): PropertyDecorator => {
  const rules = [
    Optional(),
    IsString({ message: `${name} must be an object id` }),
    Matches(PATH_ID_PATTERN, { message: `${name} must be an object id` }),
    CursorAlone(name, 'offset', `${name} cannot be combined with offset: page by cursor or by offset`),
    ...(name === 'ending_before' ? [CursorAlone(name, 'starting_after', 'Received both starting_after and ending_before: pass only one')] : []),
    JSONSchema({ description: CURSOR_DESCRIPTION[name] }) as PropertyDecorator,
  ];
  return (target, key) => rules.forEach((rule) => rule(target, key));
};

/**
 * `limit` (1..100, default 10) and either `offset` (0..10000, default 0) or one cursor
 * (`starting_after` / `ending_before`, an object id, no bound); out of range or mixed is a 400.
 */
export class ListQueryDto {
  @Optional()
  @QueryInteger()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${PAGE_LIMIT_MAX}` })
  @Max(PAGE_LIMIT_MAX, { message: `limit must be between 1 and ${PAGE_LIMIT_MAX}` })
  limit?: number;

  @Optional()
  @QueryInteger()
  @IsInt({ message: 'offset must be an integer' })
  @Min(0, { message: `offset must be between 0 and ${PAGE_OFFSET_MAX}` })
  @Max(PAGE_OFFSET_MAX, { message: `offset must be between 0 and ${PAGE_OFFSET_MAX}` })
  offset?: number;

  @Cursor('starting_after')
  starting_after?: string;

  @Cursor('ending_before')
  ending_before?: string;
}

/** The window a list route asks its service for (`recur.common.v1.PageRequest`); 0 and '' are proto3's "not set". */
export function pageRequest(query: ListQueryDto): { limit: number; offset: number; startingAfter: string; endingBefore: string } {
  return { limit: query.limit ?? 0, offset: query.offset ?? 0, startingAfter: query.starting_after ?? '', endingBefore: query.ending_before ?? '' };
}

/**
 * The page of a list the gateway holds whole (a customer's payment methods, a subscription's
 * add-ons), by offset or cursor with the services' rules (windowOf).
 */
export function listWindow<T>(items: readonly T[], query: ListQueryDto, resource: string, idOf: (item: T) => string): { data: T[]; page: PageInfo } {
  const page = { limit: query.limit ?? PAGE_LIMIT_DEFAULT, offset: query.offset ?? 0, startingAfter: query.starting_after, endingBefore: query.ending_before };
  return windowOf(items, page, resource, idOf);
}

/**
 * A service that predates cursors ignores `starting_after`/`ending_before` and answers page one,
 * which would read as the next page: a wrong answer, not a degraded one. The new services echo the
 * cursor they applied (PageInfo.cursor); one that did not is refused with a 503 while the upgrade
 * rolls out (docs/api/conventions.md#pagination).
 */
export function requireCursorApplied(query: ListQueryDto, page: { cursor?: string } | undefined): void {
  const asked = query.starting_after ?? query.ending_before;
  if (asked === undefined || page?.cursor === asked) return;
  throw new ApiError(503, 'cursor_paging_unavailable', 'This list\'s service does not apply starting_after/ending_before yet (an older version is still running): retry shortly, or page with offset.');
}

/** The list envelope every list route answers with. */
export interface ListEnvelope<T> {
  object: 'list';
  url: string;
  data: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

/** The envelope of one page; a page read by cursor must carry its echo (requireCursorApplied). */
export function listEnvelope<T>(url: string, data: T[], query: ListQueryDto, page: { total: number; hasMore: boolean; cursor?: string } | undefined): ListEnvelope<T> {
  requireCursorApplied(query, page);
  return {
    object: 'list',
    url,
    data,
    total: page?.total ?? data.length,
    limit: query.limit ?? PAGE_LIMIT_DEFAULT,
    offset: query.offset ?? 0,
    has_more: page?.hasMore ?? false,
  };
}
