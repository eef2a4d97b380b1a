import { METRIC_NAME_PATTERN, USAGE_BATCH_MAX, USAGE_IDEMPOTENCY_KEY_PATTERN, USAGE_LIMIT_MAX, USAGE_QUANTITY_MAX } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsInt, IsObject, IsString, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Nullable, Optional } from '../http/optional';
import { QueryUnixSeconds, UnixSeconds } from '../http/unix-seconds';
import { apply } from '../plans/plans.dto';

const ID_MAX = 100;

const SubscriptionId = () =>
  apply(IsDefined({ message: 'subscription is required' }), IsString({ message: 'subscription must be a string' }), MaxLength(ID_MAX, { message: 'subscription must be a subscription id' }), Matches(/\S/, { message: 'subscription must not be empty' }));
const MetricName = () =>
  apply(IsString({ message: 'metric_name must be a string' }), Matches(METRIC_NAME_PATTERN, { message: 'metric_name must be 1–100 characters: a lowercase letter, then lowercase letters, digits, _, . or -' }));
/** One usage record (docs/api/usage.md). */
export class RecordUsageDto {
  /** The metered subscription (`sub_…`), of the same app. */
  @SubscriptionId()
  subscription!: string;

  /** A metric the subscription's plan meters (a metered price component's `metric_name`). */
  @IsDefined({ message: 'metric_name is required' }) @MetricName()
  metric_name!: string;

  /** The amount of usage: an integer from 0 to 1 000 000 000. */
  @IsDefined({ message: 'quantity is required' })
  @IsInt({ message: 'quantity must be an integer' })
  @Min(0, { message: 'quantity must be at least 0' })
  @Max(USAGE_QUANTITY_MAX, { message: `quantity must be at most ${USAGE_QUANTITY_MAX}` })
  quantity!: number;

  /** 1–255 visible ASCII characters, unique per subscription: the same key and body count once. */
  @IsDefined({ message: 'idempotency_key is required' })
  @IsString({ message: 'idempotency_key must be a string' })
  @Matches(USAGE_IDEMPOTENCY_KEY_PATTERN, { message: 'idempotency_key must be 1–255 visible ASCII characters' })
  idempotency_key!: string;

  /** When the usage happened (unix seconds): in the current period, or the previous one within the grace window. Default: on receipt. */
  @Optional() @UnixSeconds('timestamp')
  timestamp?: number;
}

export class RecordUsageBatchDto {
  /** 1 to 1000 records, each with the rules of `POST /v1/usage`. */
  @IsDefined({ message: 'records is required' })
  @IsArray({ message: 'records must be an array' })
  @ArrayMinSize(1, { message: 'records must hold at least one record' })
  @ArrayMaxSize(USAGE_BATCH_MAX, { message: `records may hold at most ${USAGE_BATCH_MAX} records` })
  // ValidateNested alone would validate an array item's own items as records, taking `[[record]]`.
  @IsObject({ each: true, message: 'records must hold records (objects), not arrays or other values' })
  @ValidateNested({ each: true })
  @Type(() => RecordUsageDto)
  @JSONSchema({ type: 'array', minItems: 1, maxItems: USAGE_BATCH_MAX, items: { $ref: '#/components/schemas/RecordUsageDto' } })
  records!: RecordUsageDto[];
}

export class ListUsageQueryDto extends ListQueryDto {
  /** The subscription whose records are listed (required). */
  @SubscriptionId()
  subscription!: string;

  @Optional() @MetricName()
  metric_name?: string;

  /** The period the records count in, by its start (unix seconds, as `period.start` shows it). */
  @Optional() @QueryUnixSeconds() @UnixSeconds('period_start')
  period_start?: number;
}

export class UsageSummaryQueryDto {
  @SubscriptionId()
  subscription!: string;

  /** A period by its start (unix seconds); default the current period. */
  @Optional() @QueryUnixSeconds() @UnixSeconds('period_start')
  period_start?: number;
}

export class ListUsageAlertsQueryDto extends ListQueryDto {
  @Optional() @IsString() @MaxLength(ID_MAX)
  subscription?: string;
}

export class SetUsageLimitDto {
  @SubscriptionId()
  subscription!: string;

  /** A metric the subscription's plan meters. */
  @IsDefined({ message: 'metric_name is required' }) @MetricName()
  metric_name!: string;

  /** The subscription's own limit per period (0 to 10^15); null removes it, so the plan's applies. */
  @Nullable('integer')
  @IsInt({ message: 'limit must be an integer' })
  @Min(0, { message: 'limit must be at least 0' })
  @Max(USAGE_LIMIT_MAX, { message: `limit must be at most ${USAGE_LIMIT_MAX}` })
  limit!: number | null;
}
