import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_OFFSET_MAX } from '@recur/kernel';
import { Optional } from './optional';

/**
 * A query integer is plain decimal digits: `0x10`, `1e2`, `+5`, ` 5` and an empty value stay
 * strings and fail validation (400) instead of being read as numbers.
 */
export const QueryInteger = () => Transform(({ value }) => (typeof value === 'string' && /^(0|[1-9][0-9]{0,8})$/.test(value) ? Number(value) : value));

/** `limit` (1..100, default 10) and `offset` (0..10000, default 0); out of range is a 400. */
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

export function listEnvelope<T>(url: string, data: T[], query: ListQueryDto, page: { total: number; hasMore: boolean } | undefined): ListEnvelope<T> {
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
