import { IsDefined, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ListQueryDto } from '../http/list';
import { Optional } from '../http/optional';

/** Unix seconds from 2000 to 2100. */
const FROZEN_TIME_MIN = 946_684_800;
const FROZEN_TIME_MAX = 4_102_444_800;

export class CreateTestClockDto {
  /** The clock's starting time, unix seconds. */
  @IsDefined({ message: 'frozen_time is required' }) @IsInt({ message: 'frozen_time must be unix seconds (an integer)' })
  @Min(FROZEN_TIME_MIN, { message: 'frozen_time must be in 2000 or later' }) @Max(FROZEN_TIME_MAX, { message: 'frozen_time must be before 2100' })
  frozen_time!: number;

  /** A label; default empty. */
  @Optional() @IsString({ message: 'name must be a string' }) @MaxLength(256, { message: 'name must be at most 256 characters' })
  name?: string;
}

export class AdvanceTestClockDto {
  /** The new time, unix seconds, later than the clock's. */
  @IsDefined({ message: 'frozen_time is required' }) @IsInt({ message: 'frozen_time must be unix seconds (an integer)' })
  @Min(FROZEN_TIME_MIN, { message: 'frozen_time must be in 2000 or later' }) @Max(FROZEN_TIME_MAX, { message: 'frozen_time must be before 2100' })
  frozen_time!: number;
}

export class ListTestClocksQueryDto extends ListQueryDto {}
