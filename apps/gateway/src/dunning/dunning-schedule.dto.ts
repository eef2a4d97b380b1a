import { DUNNING_DAY_MAX, DUNNING_REMINDERS_MAX, PAYMENT_RETRIES_MAX, PAYMENT_RETRY_DAY_MAX } from '@recur/vocabulary';
import { Type } from 'class-transformer';
import { JSONSchema } from 'class-validator-jsonschema';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, IsInt, IsObject, IsString, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { Optional } from '../http/optional';

export class PaymentRetriesDto {
  /** The automatic retries' days after the first failed charge, strictly increasing (the service checks the order); [] for none. */
  @IsDefined({ message: 'payment_retries.days_after_failure is required' })
  @IsArray({ message: 'payment_retries.days_after_failure must be an array of days' })
  @ArrayMaxSize(PAYMENT_RETRIES_MAX, { message: `payment_retries.days_after_failure must hold 0 to ${PAYMENT_RETRIES_MAX} days` })
  @IsInt({ each: true, message: 'payment_retries.days_after_failure must hold whole days' })
  @Min(1, { each: true, message: `every day of payment_retries.days_after_failure must be 1 to ${PAYMENT_RETRY_DAY_MAX}` })
  @Max(PAYMENT_RETRY_DAY_MAX, { each: true, message: `every day of payment_retries.days_after_failure must be 1 to ${PAYMENT_RETRY_DAY_MAX}` })
  days_after_failure!: number[];

  /** The hour of the day (0–23) each retry runs at, in time_zone (default 9). */
  @Optional() @IsInt({ message: 'payment_retries.hour must be a whole hour' }) @Min(0, { message: 'payment_retries.hour must be 0 to 23' }) @Max(23, { message: 'payment_retries.hour must be 0 to 23' })
  hour?: number;

  /** The IANA time zone of hour (`Africa/Lusaka`; default `UTC`). */
  @Optional() @IsString({ message: 'payment_retries.time_zone must be a string' }) @MaxLength(64, { message: 'payment_retries.time_zone must be an IANA time zone' })
  time_zone?: string;
}

export class SetDunningScheduleDto {
  /** The reminders' days after a failed payment, strictly increasing (the service checks the order); the last is final. Required unless payment_retries is given. */
  @ValidateIf((body: SetDunningScheduleDto) => body.payment_retries === undefined || body.days_after_failure !== undefined)
  @IsDefined({ message: 'days_after_failure is required' })
  @IsArray({ message: 'days_after_failure must be an array of days' })
  @ArrayMinSize(1, { message: `days_after_failure must hold 1 to ${DUNNING_REMINDERS_MAX} days` })
  @ArrayMaxSize(DUNNING_REMINDERS_MAX, { message: `days_after_failure must hold 1 to ${DUNNING_REMINDERS_MAX} days` })
  @IsInt({ each: true, message: 'days_after_failure must hold whole days' })
  @Min(1, { each: true, message: `every day of days_after_failure must be 1 to ${DUNNING_DAY_MAX}` })
  @Max(DUNNING_DAY_MAX, { each: true, message: `every day of days_after_failure must be 1 to ${DUNNING_DAY_MAX}` })
  days_after_failure?: number[];

  /** Replaces the smart retries of failed automatic charges (docs/api/dunning.md#smart-retries); left out, they stay as they are. */
  @Optional()
  @IsObject({ message: 'payment_retries must be an object' })
  @ValidateNested()
  @Type(() => PaymentRetriesDto)
  @JSONSchema({ $ref: '#/components/schemas/PaymentRetriesDto' })
  payment_retries?: PaymentRetriesDto;
}
