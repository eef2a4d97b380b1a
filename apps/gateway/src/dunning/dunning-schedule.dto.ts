import { DUNNING_DAY_MAX, DUNNING_REMINDERS_MAX } from '@recur/vocabulary';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsInt, Max, Min } from 'class-validator';

export class SetDunningScheduleDto {
  /** The reminders' days after a failed payment, strictly increasing (the service checks the order); the last is final. */
  @IsDefined({ message: 'days_after_failure is required' })
  @IsArray({ message: 'days_after_failure must be an array of days' })
  @ArrayMinSize(1, { message: `days_after_failure must hold 1 to ${DUNNING_REMINDERS_MAX} days` })
  @ArrayMaxSize(DUNNING_REMINDERS_MAX, { message: `days_after_failure must hold 1 to ${DUNNING_REMINDERS_MAX} days` })
  @IsInt({ each: true, message: 'days_after_failure must hold whole days' })
  @Min(1, { each: true, message: `every day of days_after_failure must be 1 to ${DUNNING_DAY_MAX}` })
  @Max(DUNNING_DAY_MAX, { each: true, message: `every day of days_after_failure must be 1 to ${DUNNING_DAY_MAX}` })
  days_after_failure!: number[];
}
