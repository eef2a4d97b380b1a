import { SUBSCRIBABLE_EVENT_TYPES } from '@recur/vocabulary';
import { IsString, Matches, MaxLength } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';
import { QueryUnixSeconds, UnixSeconds } from '../http/unix-seconds';
import { OneOf } from '../plans/plans.dto';

export class ListEventsQueryDto extends ListQueryDto {
  /** Only events of this type (one of the 22 subscribable types). */
  @Optional() @OneOf('type', Object.keys(SUBSCRIBABLE_EVENT_TYPES))
  type?: string;

  /** Only events created at or after this time (unix seconds). */
  @Optional() @QueryUnixSeconds() @UnixSeconds('created_gte')
  created_gte?: number;

  /** Only events created at or before this time (unix seconds). */
  @Optional() @QueryUnixSeconds() @UnixSeconds('created_lte')
  created_lte?: number;

  /** Only events about this resource: its id as `data.object.id` shows it (`cus_…`, `in_…`, `sub_…`). */
  @Optional() @IsString({ message: 'resource must be a string' }) @MaxLength(100, { message: 'resource must be a resource id' }) @Matches(/^[A-Za-z0-9_]+$/, { message: 'resource must be a resource id' })
  resource?: string;
}
